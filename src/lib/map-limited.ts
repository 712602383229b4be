/** Runs `fn` over `items`, at most `limit` at once, keeping the order of the results. */
export const mapLimited = async <T, R>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> => {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
};

/**
 * At most `limit` tasks at once, started in the order asked: `run(fn)` starts `fn` when a slot is
 * free; `run(fn, true)` goes before those waiting (a task the others' answers were waiting for).
 */
export const limiter = (limit: number) => {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <R>(fn: () => Promise<R>, first = false): Promise<R> => {
    if (active < limit) active++;
    // A slot is handed on as it is freed (below): `active` never goes over the limit.
    else await new Promise<void>((resolve) => (first ? waiting.unshift(resolve) : waiting.push(resolve)));
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
};
