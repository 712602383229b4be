/**
 * Single-flight plus a short cache for powercfg reads: concurrent callers asking the same thing
 * share one child process, and an answer is reused for a moment, because every powercfg call costs
 * a process start (tens of milliseconds on a real server) and a dashboard may poll in bursts.
 * A change of the plan clears it, so a read after a set never sees the old state.
 */

interface Entry {
  value: Promise<unknown>;
  /** When the settled value stops being fresh; Infinity while the call is in flight. */
  expires: number;
}

export class ReadCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  #entries = new Map<string, Entry>();

  constructor(ttlMs: number, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The shared answer for `key`, computed by `load` when there is no fresh or pending one. */
  get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit && hit.expires > this.#now()) return hit.value as Promise<T>;
    const entries = this.#entries;
    const entry: Entry = { value: load(), expires: Number.POSITIVE_INFINITY };
    entries.set(key, entry);
    entry.value.then(
      () => {
        // Only when not cleared meanwhile: an answer started before a change must not outlive it.
        if (entries.get(key) === entry) entry.expires = this.#now() + this.#ttlMs;
      },
      () => {
        if (entries.get(key) === entry) entries.delete(key);
      },
    );
    return entry.value as Promise<T>;
  }

  /** Forgets everything, including calls still in flight (their callers still get their answer). */
  clear(): void {
    this.#entries = new Map();
  }
}
