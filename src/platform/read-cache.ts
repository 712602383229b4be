/**
 * Single-flight plus a short cache for the Windows backend's tool reads (powercfg, reg; the Linux
 * backend starts no program to read): concurrent callers asking the same thing share one child
 * process, and an answer is reused for a moment, because every call costs a process start (tens
 * of milliseconds on a real server) and a dashboard may poll in bursts.
 * A change of the plan clears it, so a read after a set never sees the old state.
 *
 * Once an answer is older than the TTL but younger than `maxStaleMs`, it is still answered at once
 * while one call refreshes it in the background: otherwise every request arriving during the refresh
 * waits for a process start, which is what a busy API's p99 latency showed (docs/PERFORMANCE.md).
 */

interface Entry {
  value: Promise<unknown>;
  /** When the settled value stops being fresh; Infinity while the call is in flight. */
  expires: number;
  /** Whether a background refresh of this (expired) value is running. */
  refreshing?: boolean;
}

export class ReadCache {
  readonly #ttlMs: number;
  readonly #maxStaleMs: number;
  readonly #now: () => number;
  #entries = new Map<string, Entry>();

  constructor(ttlMs: number, now: () => number = Date.now, maxStaleMs = 30_000) {
    this.#ttlMs = ttlMs;
    this.#now = now;
    this.#maxStaleMs = maxStaleMs;
  }

  /**
   * The shared answer for `key`, computed by `load` when there is no fresh or pending one; with
   * `live`, computed now whatever there is (and shared from then on): for a reader that must see a
   * change made since its last read, which a reused or stale answer would show it a read later.
   */
  get<T>(key: string, load: () => Promise<T>, live = false): Promise<T> {
    const hit = live ? undefined : this.#entries.get(key);
    const now = this.#now();
    if (hit && hit.expires > now) return hit.value as Promise<T>;
    if (hit && hit.expires - this.#ttlMs + this.#maxStaleMs > now) {
      if (!hit.refreshing) {
        hit.refreshing = true;
        const entries = this.#entries;
        const next = this.#start(key, load);
        next.value.then(
          () => undefined,
          () => {
            // A failed refresh: the next read waits for its own call (and sees its error).
            if (entries.get(key) === hit) entries.delete(key);
          },
        );
      }
      return hit.value as Promise<T>;
    }
    const entry = this.#start(key, load);
    this.#entries.set(key, entry);
    return entry.value as Promise<T>;
  }

  /** Starts `load`; its entry replaces the current one for `key` once it succeeds, unless cleared meanwhile. */
  #start(key: string, load: () => Promise<unknown>): Entry {
    const entries = this.#entries;
    const previous = entries.get(key);
    const entry: Entry = { value: load(), expires: Number.POSITIVE_INFINITY };
    entry.value.then(
      () => {
        // Only when not cleared meanwhile: an answer started before a change must not outlive it.
        const current = entries.get(key);
        if (current === entry || (current !== undefined && current === previous && previous.refreshing)) {
          entry.expires = this.#now() + this.#ttlMs;
          entries.set(key, entry);
        }
      },
      () => {
        if (entries.get(key) === entry) entries.delete(key);
      },
    );
    return entry;
  }

  /** Forgets everything, including calls still in flight (their callers still get their answer). */
  clear(): void {
    this.#entries = new Map();
  }
}
