/**
 * The audit trail read back: the newest records for get_audit_log (changes and refusals, which
 * are kept in logs of their own, merged by time), and the count of plan changes
 * for /metrics. The count is incremental: each call reads only what was appended since the last
 * one, and follows a rotation (the file counted so far is finished from where it stopped, now as
 * `audit.jsonl.1`), so a long or rotated log costs nothing per scrape.
 */
import { constants } from 'node:fs';
import { stat } from 'node:fs/promises';
import { type AuditLog, AuditRecord } from '../domain/audit.ts';
import type { JsonlLog } from './jsonl-log.ts';
import { openStateFile } from './safe-fs.ts';

/** The valid records of one log, newest first. */
async function* recordsOf(log: JsonlLog): AsyncGenerator<AuditRecord> {
  for await (const line of log.newestFirst()) {
    // A line that does not fit the schema (hand-edited, or from a future version) is skipped.
    const parsed = AuditRecord.safeParse(line);
    if (parsed.success) yield parsed.data;
  }
}

/**
 * The newest records (at most `limit`, at or after `since`) of the logs (the changes and the
 * refusals), merged by time, oldest first. Reads each from its newest record backwards across
 * its rotated files, so only what the answer needs is read.
 */
export const readAuditLog = async (
  logs: readonly JsonlLog[],
  query: { limit: number; since?: string },
): Promise<AuditLog> => {
  const since = query.since ? Date.parse(query.since) : Number.NEGATIVE_INFINITY;
  const streams = logs.map((l) => recordsOf(l));
  const heads = await Promise.all(streams.map((s) => s.next()));
  const newest: AuditRecord[] = [];
  let truncated = false;
  try {
    for (;;) {
      // The newest of the heads; on a tie the first log's (the changes).
      let at = -1;
      for (const [i, h] of heads.entries())
        if (
          !h.done &&
          (at < 0 || Date.parse(h.value.time) > Date.parse((heads[at]!.value as AuditRecord).time))
        )
          at = i;
      if (at < 0) break;
      const record = heads[at]!.value as AuditRecord;
      if (Date.parse(record.time) < since) break;
      if (newest.length === query.limit) {
        truncated = true;
        break;
      }
      newest.push(record);
      heads[at] = await streams[at]!.next();
    }
  } finally {
    await Promise.all(streams.map((s) => s.return(undefined)));
  }
  return { records: newest.reverse(), truncated };
};

/** Audit results that mean the active plan really changed (a restore switches it back). */
const planChangeResults = new Set(['changed', 'restored']);

const CHUNK_BYTES = 1024 * 1024;

/**
 * Counts plan changes in audit.jsonl incrementally: each scrape reads only what was appended since
 * the last one, so a long audit log costs nothing per scrape. Counting from the log (rather than
 * a hook in the operation) also counts changes made by the CLI in another process.
 */
export class AuditChangeCounter {
  /** The log's files, newest first: `audit.jsonl`, `audit.jsonl.1`, ... */
  readonly #files: string[];
  #offset = 0;
  #count = 0;
  /** The file being counted; after rotations it is found again under a `.<n>` name. */
  #ino: number | undefined;

  constructor(files: string[]) {
    this.#files = files;
  }

  async total(): Promise<number> {
    const [current, ...rotated] = this.#files;
    let st: { size: number; ino: number };
    try {
      st = await stat(current!);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return this.#count;
      throw e;
    }
    if (this.#ino !== undefined && st.ino !== this.#ino) {
      // Rotated since the last call: finish the file counted so far, then count the newer ones whole.
      const stats = await Promise.all(rotated.map((f) => stat(f).catch(() => undefined)));
      const at = stats.findIndex((s) => s?.ino === this.#ino);
      for (let i = at === -1 ? rotated.length - 1 : at; i >= 0; i--) {
        if (i !== at) this.#offset = 0;
        if (stats[i]) await this.#countFrom(rotated[i]!, stats[i]!.size);
      }
      this.#offset = 0;
    }
    this.#ino = st.ino;
    if (st.size < this.#offset) {
      // Truncated in place: start over; Prometheus treats the drop as a counter reset.
      this.#offset = 0;
      this.#count = 0;
    }
    if (st.size > this.#offset) await this.#countFrom(current!, st.size);
    return this.#count;
  }

  /** Counts the complete lines between #offset and `size`, advancing #offset past them. */
  async #countFrom(path: string, size: number): Promise<void> {
    const handle = await openStateFile(path, constants.O_RDONLY, { what: 'The audit log' });
    if (!handle) return;
    try {
      const buf = Buffer.alloc(Math.min(CHUNK_BYTES, size - this.#offset));
      while (this.#offset < size) {
        const { bytesRead } = await handle.read(
          buf,
          0,
          Math.min(buf.length, size - this.#offset),
          this.#offset,
        );
        if (bytesRead === 0) break;
        const end = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
        if (end < 0) {
          // A line longer than a chunk is no audit record we wrote; a torn tail waits for its newline.
          if (bytesRead === buf.length) this.#offset += bytesRead;
          break;
        }
        for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
          if (!line.trim()) continue;
          try {
            if (planChangeResults.has((JSON.parse(line) as { result?: string }).result ?? '')) this.#count++;
          } catch {
            // a line cut short by a crash mid-append: the audit reader skips it too
          }
        }
        this.#offset += end + 1;
      }
    } finally {
      await handle.close();
    }
  }
}
