/**
 * The state directory: small JSON documents written atomically (temp file, fsync, rename) and
 * append-only JSON-lines logs (audit). Names are fixed by the code, never taken from a caller.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { appendFile, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';

/** Every file the service keeps; a caller can only pick one of these. */
export type StateFile =
  | 'simulated-backend.json'
  | 'benchmarks.json'
  | 'compare-journal.json'
  | 'holds.json'
  | 'desired.json'
  | 'audit.jsonl';

/** True when the file exists, is not empty and its last byte is not a newline. */
const endsTorn = async (path: string): Promise<boolean> => {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch {
    return false;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    await handle.close();
  }
};

export class Store {
  readonly dir: string;
  /**
   * The text of each document as last read, with the identity of the file it came from. Reads are
   * on every request's path (the simulated plan, the desired state): a stat that shows the same file
   * skips the open/read/close, and an absent file costs no exception. Every write replaces the file
   * (a new inode, a new mtime), so a change by this or another process is always seen.
   */
  #texts = new Map<StateFile, { key: string; text: string }>();

  constructor(dir: string) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  path(file: StateFile): string {
    return join(this.dir, file);
  }

  /** Reads and validates a JSON document; undefined when absent or unreadable (a torn file is ignored). */
  async read<T extends z.ZodType>(file: StateFile, schema: T): Promise<z.infer<T> | undefined> {
    const path = this.path(file);
    // bigint: nanosecond times, so two writes within a millisecond still differ.
    const st = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (!st) return undefined;
    const key = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    let text = this.#texts.get(file)?.key === key ? this.#texts.get(file)?.text : undefined;
    if (text === undefined) {
      try {
        text = await readFile(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
      this.#texts.set(file, { key, text });
    }
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /** Writes a document so that a reader sees either the old or the new content, never a mix. */
  async write(file: StateFile, value: unknown): Promise<void> {
    const target = this.path(file);
    const tmp = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(value, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, target);
  }

  async remove(file: StateFile): Promise<void> {
    await rm(this.path(file), { force: true });
  }

  /**
   * Appends one JSON line; a single write() of a short line is atomic with O_APPEND. When a crash
   * (power loss) left the log without its final newline, the record starts on a line of its own
   * instead of being glued to the torn fragment and lost with it.
   */
  async append(file: StateFile, record: unknown): Promise<void> {
    const path = this.path(file);
    await appendFile(path, `${(await endsTorn(path)) ? '\n' : ''}${JSON.stringify(record)}\n`, {
      mode: 0o600,
    });
  }

  /** Reads a JSON-lines log, skipping a torn last line. */
  async readLines(file: StateFile): Promise<unknown[]> {
    let text: string;
    try {
      text = await readFile(this.path(file), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: unknown[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        out.push(JSON.parse(line));
      } catch {
        // a line cut short by a crash mid-append: skip it
      }
    }
    return out;
  }
}
