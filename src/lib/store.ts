/**
 * The state directory: small JSON documents written atomically (temp file, fsync, rename) and
 * the audit trail, a JSON-lines log rotated by size. Names are fixed by the code, never taken from
 * a caller. A document that exists but cannot be read is kept aside (see keep-aside.ts), logged
 * and reported; it is never overwritten.
 */
import { type FSWatcher, lstatSync, mkdirSync, watch } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { z } from 'zod';
import { freezeDeep } from './frozen.ts';
import { DEFAULT_ROTATION, JsonlLog, type RotationOptions } from './jsonl-log.ts';
import { type DamagedFile, damagedFiles, keepAside, type ListingWatch, watchListing } from './keep-aside.ts';
import type { Logger } from './log.ts';
import { replaceFile } from './replace-file.ts';
import { orRemove, readStateFile, writeNewFile } from './safe-fs.ts';
import { tempPath } from './temp-files.ts';

/** Every file the service keeps; a caller can only pick one of these. */
export type StateFile =
  | 'simulated-backend.json'
  | 'benchmarks.json'
  | 'restore-journal.json'
  | 'plan-change.json'
  | 'compare-journal.json'
  | 'holds.json'
  | 'desired.json'
  | 'effective.json'
  | 'audit.jsonl'
  | 'audit-refused.jsonl';

export class Store {
  readonly dir: string;
  /**
   * The text of each document as last read, with the identity of the file it came from. Reads are
   * on every request's path (the simulated plan, the desired state): a stat that shows the same file
   * skips the open/read/close, and an absent file costs no exception. Every write replaces the file
   * (a new inode, a new mtime), so a change by this or another process is always seen.
   */
  #texts = new Map<
    StateFile,
    { key: string; text: string; shared?: { schema: z.ZodType; value: unknown } }
  >();

  readonly audit: JsonlLog;
  /**
   * Refused attempts and their summaries, in a log of their own (rotated the same way), so that no
   * number of refusals can rotate a change record out of `audit.jsonl`.
   */
  readonly refusals: JsonlLog;
  readonly #log: Logger | undefined;
  /** Files this instance has kept aside, for the counter in /metrics. */
  #keptAside = 0;

  constructor(dir: string, options: { log?: Logger; rotation?: RotationOptions } = {}) {
    this.dir = dir;
    this.#log = options.log;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.audit = new JsonlLog(join(dir, 'audit.jsonl'), options.rotation ?? DEFAULT_ROTATION);
    this.refusals = new JsonlLog(join(dir, 'audit-refused.jsonl'), options.rotation ?? DEFAULT_ROTATION);
  }

  /** The one watcher of the directory, while anyone listens (see watch). */
  #watcher: FSWatcher | undefined;
  #listeners = new Set<{ files: ReadonlySet<string>; onChange: () => void }>();

  /**
   * Calls `onChange` when one of `files` is written, replaced or removed, by this process or
   * another (a CLI run). Event-driven (inotify on Linux, ReadDirectoryChangesW on Windows): nothing
   * polls. Answers the function that stops listening, or undefined when the directory cannot be
   * watched (the caller then polls).
   */
  watch(files: readonly StateFile[], onChange: () => void): (() => void) | undefined {
    if (!this.#watcher) {
      let listing: ListingWatch | undefined;
      try {
        // The inode first: a directory replaced before the watch began is not the one it vouches for.
        listing = watchListing(this.dir, lstatSync(this.dir, { bigint: true }).ino);
        const vouching = listing;
        const watcher = watch(this.dir, { persistent: false }, (_event, name) => {
          const file = name?.toString();
          // The directory itself moved or removed (inotify names it): nothing in its place is
          // watched, so the listing is looked at on every ask again.
          if (file === basename(this.dir)) vouching.stop();
          else vouching.changed();
          for (const l of this.#listeners) if (file === undefined || l.files.has(file)) l.onChange();
        });
        watcher.on('close', () => vouching.stop());
        watcher.on('error', (e) => {
          this.#log?.warn('watching the state directory failed; changes by other processes are seen late', {
            error: e.message,
          });
          vouching.stop();
          watcher.close();
          if (this.#watcher === watcher) this.#watcher = undefined;
        });
        this.#watcher = watcher;
      } catch (e) {
        listing?.stop();
        this.#log?.debug('the state directory cannot be watched', { error: (e as Error).message });
        return undefined;
      }
    }
    const listener = { files: new Set<string>(files), onChange };
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        this.#watcher?.close();
        this.#watcher = undefined;
      }
    };
  }

  /** How many damaged files this instance has moved aside since it started. */
  get keptAsideTotal(): number {
    return this.#keptAside;
  }

  /** The kept copies of damaged files in the state directory (by any process, until removed). */
  damaged(): readonly DamagedFile[] {
    return damagedFiles(this.dir);
  }

  /** Moves a damaged document aside and logs it; the caller then treats it as absent. */
  private async damagedDocument(file: StateFile, ino: bigint, why: string): Promise<void> {
    this.#texts.delete(file);
    const keptAs = await keepAside(this.path(file), ino);
    if (!keptAs) return;
    this.#keptAside++;
    this.#log?.error('state file damaged: kept aside, never overwritten', {
      file: this.path(file),
      keptAs: join(this.dir, keptAs),
      why,
    });
  }

  /** Each file's path, joined once: a read on every request's path asks for it. */
  #paths = new Map<StateFile, string>();
  path(file: StateFile): string {
    let path = this.#paths.get(file);
    if (path === undefined) {
      path = join(this.dir, file);
      this.#paths.set(file, path);
    }
    return path;
  }

  /**
   * Reads and validates a JSON document; undefined when absent. A document that is not JSON or
   * does not fit the schema (a stray byte, truncated, empty) is kept aside and then absent too.
   */
  read<T extends z.ZodType>(file: StateFile, schema: T): Promise<z.infer<T> | undefined> {
    return this.#read(file, schema, false);
  }

  /**
   * `read` for the readers on every request's path (the simulated plan, the desired state, the
   * last read-back): the value is deeply frozen (lib/frozen.ts) and, while the file is the same,
   * the same object, so it is parsed and validated once per change rather than once per request.
   * The file is still looked at (one `lstat`) on every call, so a change is seen at once.
   */
  readShared<T extends z.ZodType>(file: StateFile, schema: T): Promise<z.infer<T> | undefined> {
    return this.#read(file, schema, true);
  }

  async #read<T extends z.ZodType>(
    file: StateFile,
    schema: T,
    shared: boolean,
  ): Promise<z.infer<T> | undefined> {
    const path = this.path(file);
    // bigint: nanosecond times, so two writes within a millisecond still differ. lstat: a planted
    // symbolic link is not the file it points to (and the read below refuses it).
    const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    if (!st) return undefined;
    const key = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}:${st.uid}`;
    let entry = this.#texts.get(file);
    if (entry?.key !== key) {
      const read = await readStateFile(path);
      if (!read) return undefined;
      entry = { key, text: read.text };
      this.#texts.set(file, entry);
    } else if (shared && entry.shared?.schema === schema) {
      return entry.shared.value as z.infer<T>;
    }
    let json: unknown;
    try {
      json = JSON.parse(entry.text);
    } catch (e) {
      await this.damagedDocument(file, st.ino, `not JSON: ${(e as Error).message}`);
      return undefined;
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      await this.damagedDocument(file, st.ino, parsed.error.issues.map((i) => i.message).join('; '));
      return undefined;
    }
    if (!shared) return parsed.data;
    entry.shared = { schema, value: freezeDeep(parsed.data) };
    return entry.shared.value as z.infer<T>;
  }

  /** Writes a document so that a reader sees either the old or the new content, never a mix. */
  async write(file: StateFile, value: unknown): Promise<void> {
    const target = this.path(file);
    const tmp = tempPath(target);
    await writeNewFile(tmp, `${JSON.stringify(value, null, 2)}\n`);
    await orRemove(tmp, () => replaceFile(tmp, target));
  }

  async remove(file: StateFile): Promise<void> {
    await rm(this.path(file), { force: true });
  }

  /** Appends one record to the audit trail: changes to `audit.jsonl`, refusals to their own log. */
  async append(file: 'audit.jsonl' | 'audit-refused.jsonl', record: unknown): Promise<void> {
    await (file === 'audit.jsonl' ? this.audit : this.refusals).append(record);
  }

  /** Every audit record of both logs, oldest first, across the rotated files (skipping torn lines). */
  async readLines(_file: 'audit.jsonl'): Promise<unknown[]> {
    const time = (r: unknown) => Date.parse(String((r as { time?: unknown })?.time ?? ''));
    const [changes, refusals] = [await this.audit.all(), await this.refusals.all()];
    // Merged by time, each log's own order kept (a record is never moved past one of its own log).
    const out: unknown[] = [];
    let r = 0;
    for (const c of changes) {
      while (r < refusals.length && time(refusals[r]) < time(c)) out.push(refusals[r++]);
      out.push(c);
    }
    return out.concat(refusals.slice(r));
  }
}
