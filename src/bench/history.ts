/**
 * The benchmark history: the newest results in `benchmarks.json` in the state directory, bounded
 * in count and in bytes so it cannot grow without limit. A stored result that no longer matches
 * the schema is skipped, not allowed to hide the others.
 */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { BenchmarkResult } from '../domain/benchmark.ts';
import type { Store } from '../lib/store.ts';

const HistoryDocument = z.object({
  version: z.literal(1),
  results: z.array(z.unknown()),
});

export interface HistoryLimits {
  /** Results kept, newest first (default 100). */
  count: number;
  /** Upper bound on the JSON document; the oldest results go first (default 2 MiB). */
  bytes: number;
}

export const defaultHistoryLimits: HistoryLimits = { count: 100, bytes: 2 * 1024 * 1024 };

export class BenchmarkHistory {
  private readonly store: Store;
  private readonly limits: HistoryLimits;
  /** The newest result as of the file's modification time, so a scrape re-reads only after a change. */
  private newest: { mtimeMs: number; result: BenchmarkResult | undefined } | undefined;

  constructor(store: Store, limits: Partial<HistoryLimits> = {}) {
    this.store = store;
    this.limits = { ...defaultHistoryLimits, ...limits };
  }

  /** All stored results, newest first. */
  async all(): Promise<BenchmarkResult[]> {
    const doc = await this.store.read('benchmarks.json', HistoryDocument);
    if (!doc) return [];
    const out: BenchmarkResult[] = [];
    for (const r of doc.results) {
      const parsed = BenchmarkResult.safeParse(r);
      if (parsed.success) out.push(parsed.data);
    }
    return out;
  }

  /** The newest stored result (also one written by another process), re-read only when the file changed. */
  async latest(): Promise<BenchmarkResult | undefined> {
    let mtimeMs: number;
    try {
      mtimeMs = (await stat(this.store.path('benchmarks.json'))).mtimeMs;
    } catch {
      return undefined;
    }
    if (this.newest?.mtimeMs !== mtimeMs) this.newest = { mtimeMs, result: (await this.all())[0] };
    return this.newest.result;
  }

  async get(id: string): Promise<BenchmarkResult | undefined> {
    return (await this.all()).find((r) => r.id === id);
  }

  /** Adds a result in front; callers serialise adds (the service holds its run lock). */
  async add(result: BenchmarkResult): Promise<void> {
    const results = [result, ...(await this.all()).filter((r) => r.id !== result.id)].slice(
      0,
      this.limits.count,
    );
    let doc = { version: 1 as const, results };
    while (doc.results.length > 1 && Buffer.byteLength(JSON.stringify(doc, null, 2)) > this.limits.bytes) {
      doc = { version: 1, results: doc.results.slice(0, -1) };
    }
    await this.store.write('benchmarks.json', doc);
  }
}
