/**
 * A lock across processes on this host (the server, a CLI run, an MCP stdio server): a lock file
 * naming its holder (pid, process start time, instance id; see process-identity.ts). Used for the
 * plan lock, one benchmark at a time and the token file.
 *
 * - Created atomically with its content: the content is written to a file of its own, then
 *   hard-linked to the lock name, which fails when the name exists. No reader sees a torn lock.
 * - Never blocks a successor: a holder that is gone (dead, pid reused, earlier instance of this
 *   pid) is stale, and so is a lock not refreshed for `staleMs`. A live holder refreshes the lock's
 *   modification time every `staleMs / 4`, so an operation longer than `staleMs` keeps its lock.
 * - Never admits two holders: contenders that find the same stale lock race for a takeover marker
 *   named after that lock's content, created the same atomic way; only the winner replaces the lock
 *   (rename, atomic), after checking under the marker that it still holds the stale content. A
 *   marker whose taker died is itself stale and taken over by the same rule.
 * - Read as a state file (safe-fs.ts): a lock that is a symbolic link (to a FIFO, say) or not a
 *   regular file is refused, never followed or waited on; a temporary file whose write failed (a
 *   full disk) is removed at once.
 */
import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { link, rm, utimes } from 'node:fs/promises';
import { type ErrorCode, PowerPlanError } from '../domain/errors.ts';
import { holderState, type ProcessIdentity, thisProcess } from './process-identity.ts';
import { replaceFile } from './replace-file.ts';
import { openStateFile, orRemove, writeNewFile } from './safe-fs.ts';
import { tempPath } from './temp-files.ts';

export interface LockContent {
  pid: number;
  start: string | null;
  instance: string;
  /** Random per acquisition. */
  token: string;
  startedAt: string;
  what: string;
}

export interface FileLockOptions {
  /** A lock whose holder has not refreshed it for this long is stale (default 2 minutes). */
  staleMs?: number;
  /** The error code when the lock is held by someone else. */
  code: ErrorCode;
  /** The message when the lock is held: what is running, by whom, and what to do. */
  heldMessage: (holder: LockContent) => string;
  /** Who takes the lock; tests only. */
  identity?: ProcessIdentity;
}

export const DEFAULT_STALE_MS = 120_000;
/** A lock file that cannot be parsed and is younger than this may be one an older version is still writing. */
const UNREADABLE_GRACE_MS = 2_000;
/** Markers of markers: one level is the normal case (a taker died mid-takeover). */
const MAX_DEPTH = 4;

interface Seen {
  raw: string;
  holder: LockContent | undefined;
  ageMs: number;
}

type Outcome = { won: true } | { won: false; holder: LockContent | undefined };

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

const parse = (raw: string): LockContent | undefined => {
  try {
    const c = JSON.parse(raw) as Partial<LockContent>;
    if (typeof c.pid !== 'number' || typeof c.startedAt !== 'string') return undefined;
    return {
      pid: c.pid,
      start: typeof c.start === 'string' ? c.start : null,
      instance: String(c.instance ?? ''),
      token: String(c.token ?? ''),
      startedAt: c.startedAt,
      what: String(c.what ?? 'another process'),
    };
  } catch {
    return undefined;
  }
};

/** A lock file is a few hundred bytes; a larger one is no lock of ours (read as unreadable). */
const MAX_LOCK_BYTES = 4096;

/**
 * A lock file's content and modification time, opened as a state file (never through a symbolic
 * link, never blocking on a FIFO, refused unless a regular file of this user or root); undefined
 * when it does not exist.
 */
const readLock = async (path: string): Promise<{ raw: string; mtimeMs: number } | undefined> => {
  const handle = await openStateFile(path, constants.O_RDONLY, { what: 'The lock file' });
  if (!handle) return undefined;
  try {
    const buf = Buffer.alloc(MAX_LOCK_BYTES);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return { raw: buf.subarray(0, bytesRead).toString('utf8'), mtimeMs: (await handle.stat()).mtimeMs };
  } finally {
    await handle.close();
  }
};
const contentOf = async (path: string) => (await readLock(path).catch(() => undefined))?.raw;

const inspect = async (path: string): Promise<Seen | undefined> => {
  const read = await readLock(path);
  return read && { raw: read.raw, holder: parse(read.raw), ageMs: Date.now() - read.mtimeMs };
};

export class FileLock {
  readonly path: string;
  private readonly staleMs: number;
  private readonly options: FileLockOptions;
  private readonly me: ProcessIdentity;

  constructor(path: string, options: FileLockOptions) {
    this.path = path;
    this.staleMs = options.staleMs ?? DEFAULT_STALE_MS;
    this.options = options;
    this.me = options.identity ?? thisProcess;
  }

  private stale(seen: Seen): boolean {
    if (!seen.holder) return seen.ageMs > UNREADABLE_GRACE_MS;
    if (seen.ageMs > this.staleMs) return true;
    return holderState(seen.holder, this.me) === 'gone';
  }

  /** Links `source` (my content) to `path`, taking over a stale holder; never replaces a live one. */
  private async take(path: string, source: string, mine: string, depth: number): Promise<Outcome> {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await link(source, path);
        return { won: true };
      } catch (e) {
        if (code(e) !== 'EEXIST') throw e;
      }
      const seen = await inspect(path);
      if (!seen) continue; // released meanwhile
      if (!this.stale(seen) || depth >= MAX_DEPTH) return { won: false, holder: seen.holder };
      const marker = `${this.path}.takeover-${createHash('sha256').update(seen.raw).digest('hex').slice(0, 16)}`;
      const m = await this.take(marker, source, mine, depth + 1);
      if (!m.won) return { won: false, holder: seen.holder };
      try {
        const now = await contentOf(path);
        if (now !== seen.raw) continue; // someone else took over, or it was released: look again
        // Replace the stale content atomically with a fresh copy of mine.
        const copy = tempPath(this.path);
        await writeNewFile(copy, mine, { what: 'The lock file' });
        await orRemove(copy, () => replaceFile(copy, path));
        return { won: true };
      } finally {
        if ((await contentOf(marker)) === mine) await rm(marker, { force: true });
      }
    }
    const seen = await inspect(path);
    return { won: false, holder: seen?.holder };
  }

  private busy(holder: LockContent | undefined): PowerPlanError {
    const h = holder ?? {
      pid: 0,
      start: null,
      instance: '',
      token: '',
      startedAt: 'just now',
      what: 'another process',
    };
    return new PowerPlanError(this.options.code, this.options.heldMessage(h), {
      pid: h.pid,
      startedAt: h.startedAt,
    });
  }

  /**
   * Takes the lock or throws the configured error; returns the function that releases it. While
   * held, the lock's modification time is refreshed so that it never goes stale under a live holder.
   */
  async acquire(what: string): Promise<() => Promise<void>> {
    const content: LockContent = {
      ...this.me,
      token: randomUUID(),
      startedAt: new Date().toISOString(),
      what,
    };
    const mine = JSON.stringify(content);
    const source = tempPath(this.path);
    await writeNewFile(source, mine, { what: 'The lock file' });
    let outcome: Outcome;
    try {
      outcome = await this.take(this.path, source, mine, 0);
    } finally {
      await rm(source, { force: true });
    }
    if (!outcome.won) throw this.busy(outcome.holder);
    const ours = async () => (await contentOf(this.path)) === mine;
    const timer = setInterval(
      () =>
        void ours()
          .then((yes) => (yes ? utimes(this.path, new Date(), new Date()) : undefined))
          .catch(() => {}),
      Math.max(50, Math.floor(this.staleMs / 4)),
    );
    timer.unref();
    return async () => {
      clearInterval(timer);
      if (await ours()) await rm(this.path, { force: true });
    };
  }
}
