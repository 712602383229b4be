/**
 * An append-only JSON-lines log rotated by size (the audit trail): `name` is the current file,
 * `name.1` the one before, up to `name.<files - 1>`; the oldest is dropped when a new one starts.
 * Reading goes from the newest record backwards in chunks, so a caller that wants the last
 * hundred records reads a few kilobytes, not every file whole.
 */
import { constants } from 'node:fs';
import { lstat, rename, rm } from 'node:fs/promises';
import { openStateFile } from './safe-fs.ts';

export interface RotationOptions {
  /** A file is rotated before an append would take it past this size. */
  maxBytes: number;
  /** Files kept, the current one included. */
  files: number;
}

export const DEFAULT_ROTATION: RotationOptions = { maxBytes: 10 * 1024 * 1024, files: 5 };

const CHUNK = 64 * 1024;

/** True when the file exists, is not empty and its last byte is not a newline. */
const endsTorn = async (path: string): Promise<boolean> => {
  const handle = await openStateFile(path, constants.O_RDONLY, { what: 'The audit log' });
  if (!handle) return false;
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

const sizeOf = (path: string) =>
  lstat(path).then(
    (s) => s.size,
    () => 0,
  );

/** Lines of one file from the last to the first, as raw text (empty lines skipped). */
async function* linesBackwards(path: string): AsyncGenerator<string> {
  const handle = await openStateFile(path, constants.O_RDONLY, { what: 'The audit log' });
  if (!handle) return;
  try {
    let pos = (await handle.stat()).size;
    let carry = Buffer.alloc(0);
    while (pos > 0) {
      const length = Math.min(CHUNK, pos);
      pos -= length;
      const chunk = Buffer.alloc(length);
      await handle.read(chunk, 0, length, pos);
      let buf = Buffer.concat([chunk, carry]);
      // Split on newline bytes only: a multi-byte character is never cut in half.
      for (let nl = buf.lastIndexOf(0x0a); nl !== -1; nl = buf.lastIndexOf(0x0a)) {
        const line = buf.subarray(nl + 1).toString('utf8');
        if (line.trim()) yield line;
        buf = buf.subarray(0, nl);
      }
      carry = buf;
    }
    const first = carry.toString('utf8');
    if (first.trim()) yield first;
  } finally {
    await handle.close();
  }
}

export class JsonlLog {
  readonly path: string;
  private readonly rotation: RotationOptions;

  constructor(path: string, rotation: RotationOptions = DEFAULT_ROTATION) {
    this.path = path;
    this.rotation = rotation;
  }

  /** The files, newest first: `name`, `name.1`, ... */
  files(): string[] {
    return Array.from({ length: this.rotation.files }, (_, i) => (i === 0 ? this.path : `${this.path}.${i}`));
  }

  private async rotate(): Promise<void> {
    const files = this.files();
    await rm(files.at(-1)!, { force: true });
    for (let i = files.length - 2; i >= 0; i--) {
      await rename(files[i]!, files[i + 1]!).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') throw e;
      });
    }
  }

  /**
   * Appends one JSON line; a single write() of a short line is atomic with O_APPEND. When a crash
   * left the file without its final newline, the record starts on a line of its own.
   */
  async append(record: unknown): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    const size = await sizeOf(this.path);
    if (size > 0 && size + Buffer.byteLength(line) > this.rotation.maxBytes && this.rotation.files > 1) {
      await this.rotate();
    }
    const torn = await endsTorn(this.path);
    // Never through a planted link, only into a file of this user or root that others cannot write.
    const handle = await openStateFile(
      this.path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
      {
        what: 'The audit log',
      },
    );
    try {
      await handle!.write(`${torn ? '\n' : ''}${line}`);
    } finally {
      await handle!.close();
    }
  }

  /** Records from the newest backwards across the rotated files; lines that are not JSON are skipped. */
  async *newestFirst(): AsyncGenerator<unknown> {
    for (const file of this.files()) {
      for await (const line of linesBackwards(file)) {
        try {
          yield JSON.parse(line);
        } catch {
          // a line cut short by a crash mid-append
        }
      }
    }
  }

  /** Every record, oldest first (tests and small logs). */
  async all(): Promise<unknown[]> {
    const out: unknown[] = [];
    for await (const r of this.newestFirst()) out.push(r);
    return out.reverse();
  }
}
