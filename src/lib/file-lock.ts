/**
 * A lock across processes on this host (the server, a CLI run, an MCP stdio server): a lock file in
 * the state directory created with O_EXCL, holding the owner's pid. A lock left by a process that is
 * gone (or older than any holder can last) is stale and taken over, so a crash never blocks for good.
 * Used for one benchmark at a time and for the plan lock.
 */
import { open, readFile, rm, stat } from 'node:fs/promises';
import { type ErrorCode, PowerPlanError } from '../domain/errors.ts';

export interface LockContent {
  pid: number;
  startedAt: string;
  what: string;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export interface FileLockOptions {
  /** After this long a holder is presumed dead even if its pid lives on (pid reuse). */
  staleMs?: number;
  /** The error code when the lock is held by someone else. */
  code: ErrorCode;
  /** The message when the lock is held: what is running, by whom, and what to do. */
  heldMessage: (holder: LockContent) => string;
}

export class FileLock {
  private readonly path: string;
  private readonly staleMs: number;
  private readonly options: FileLockOptions;

  constructor(path: string, options: FileLockOptions) {
    this.path = path;
    this.staleMs = options.staleMs ?? 15 * 60_000;
    this.options = options;
  }

  private async holder(): Promise<LockContent | undefined> {
    try {
      const c = JSON.parse(await readFile(this.path, 'utf8')) as Partial<LockContent>;
      if (typeof c.pid !== 'number' || typeof c.startedAt !== 'string') return undefined;
      return { pid: c.pid, startedAt: c.startedAt, what: String(c.what ?? 'another process') };
    } catch {
      return undefined;
    }
  }

  /** Takes the lock or throws the configured error; returns the function that releases it. */
  async acquire(what: string): Promise<() => Promise<void>> {
    const content: LockContent = { pid: process.pid, startedAt: new Date().toISOString(), what };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const handle = await open(this.path, 'wx', 0o600);
        try {
          await handle.writeFile(JSON.stringify(content));
        } finally {
          await handle.close();
        }
        return async () => {
          const now = await this.holder();
          if (now?.pid === content.pid && now.startedAt === content.startedAt)
            await rm(this.path, { force: true });
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const h = await this.holder();
      if (!h) {
        // Unreadable: either torn by a crash (stale) or being written right now (give it a moment).
        const age = await stat(this.path).then(
          (s) => Date.now() - s.mtimeMs,
          () => Number.POSITIVE_INFINITY,
        );
        if (age < 5_000)
          throw new PowerPlanError(
            this.options.code,
            this.options.heldMessage({ pid: 0, startedAt: 'just now', what: 'another process' }),
          );
      }
      const stale = !h || !alive(h.pid) || !(Date.now() - Date.parse(h.startedAt) <= this.staleMs);
      if (h && !stale) {
        throw new PowerPlanError(this.options.code, this.options.heldMessage(h), {
          pid: h.pid,
          startedAt: h.startedAt,
        });
      }
      await rm(this.path, { force: true });
    }
    throw new PowerPlanError(
      this.options.code,
      this.options.heldMessage({ pid: 0, startedAt: 'just now', what: 'another process' }),
    );
  }
}
