/**
 * Linked abort signals: one signal aborted by any of its sources (or by `abort`), unlinked by
 * `release` once the work is done. Not AbortSignal.any: on Node 20 its dependents of a long-lived
 * source (the shutdown signal of a server that runs for days) are kept for the life of that source,
 * and it costs more than the rest of a read request (docs/PERFORMANCE.md).
 */
export interface LinkedSignal {
  signal: AbortSignal;
  /** Aborts the linked signal itself (a timeout, a close), not the sources. */
  abort: (reason?: unknown) => void;
  /** Stops listening to the sources; call it when the work is done. */
  release: () => void;
}

export const linkedSignal = (sources: readonly (AbortSignal | undefined)[]): LinkedSignal => {
  const controller = new AbortController();
  const abort = (reason?: unknown) => controller.abort(reason);
  const live = sources.filter((s): s is AbortSignal => s !== undefined);
  const aborted = live.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, abort, release: () => {} };
  }
  const onAbort = (e: Event) => controller.abort((e.target as AbortSignal).reason);
  for (const s of live) s.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    abort,
    release: () => {
      for (const s of live) s.removeEventListener('abort', onAbort);
    },
  };
};
