/**
 * At most `limit` tasks at once, started in the order asked: `run(fn)` starts `fn` when a slot is
 * free; `run(fn, true)` goes before those waiting (a task the others' answers were waiting for).
 */
export const limiter = (limit: number) => {
  if (!(limit >= 1)) throw new RangeError(`limiter: a limit of at least 1, not ${limit}`);
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

/** Runs `fn` over `items`, at most `limit` at once, keeping the order of the results. */
export const mapLimited = <T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> => {
  const run = limiter(limit);
  return Promise.all(items.map((item) => run(() => fn(item))));
};
