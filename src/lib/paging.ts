/**
 * Pages of a long answer in a stable order: the items are ranked by a sort key (a string, unique
 * per item), and a page is the items after the last key of the page before, up to a count and a
 * size in bytes. The cursor that asks for the next page carries that key, the snapshot the page
 * was cut from and a fingerprint of the filters: a page asked with other filters is refused, and a
 * snapshot that is gone still pages on from the key (in the same order, over fresher answers).
 */
import { PowerPlanError } from '../domain/errors.ts';

export interface Cursor {
  /** The snapshot the pages are cut from (whoever keeps it decides what the id means). */
  snapshot: string;
  /** The sort key of the last item already given. */
  after: string;
  /** A fingerprint of the filters the pages were asked with. */
  filters: string;
}

export const encodeCursor = (c: Cursor): string =>
  Buffer.from(JSON.stringify([c.snapshot, c.after, c.filters]), 'utf8').toString('base64url');

/** The cursor's fields, or invalid_input when the text is no cursor (or one made for other filters). */
export const decodeCursor = (text: string, filters: string): Cursor => {
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    fields = undefined;
  }
  if (!Array.isArray(fields) || fields.length !== 3 || !fields.every((f) => typeof f === 'string'))
    throw new PowerPlanError(
      'invalid_input',
      'cursor: not a cursor of this answer; pass the nextCursor of the page before, unchanged.',
    );
  const [snapshot, after, made] = fields as [string, string, string];
  if (made !== filters)
    throw new PowerPlanError(
      'invalid_input',
      'cursor: it was made for other filters; ask the next page with the same filters as the first, or start again without a cursor.',
    );
  return { snapshot, after, filters };
};

/** A stable fingerprint of filter values (key order and undefined fields do not matter). */
export const fingerprint = (filters: Record<string, unknown>): string =>
  JSON.stringify(
    Object.keys(filters)
      .filter((k) => filters[k] !== undefined)
      .sort()
      .map((k) => [k, filters[k]]),
  );

export interface PageOptions<T> {
  limit: number;
  /** The page ends before the item that would take its JSON past this many bytes (one item at least). */
  maxBytes: number;
  after?: string | undefined;
  keyOf: (item: T) => string;
}

/** The index of the first item whose key is greater than `after` (items sorted by key). */
const firstAfter = <T>(items: readonly T[], after: string, keyOf: (item: T) => string): number => {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyOf(items[mid]!) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/** The JSON size of each item object, measured once however many pages count it. */
const sizes = new WeakMap<object, number>();
const jsonBytes = (item: unknown): number => {
  if (typeof item !== 'object' || item === null) return Buffer.byteLength(JSON.stringify(item));
  let n = sizes.get(item);
  if (n === undefined) {
    n = Buffer.byteLength(JSON.stringify(item));
    sizes.set(item, n);
  }
  return n;
};

/** One page of `items` (sorted by `keyOf`) and the key to go on from, or null after the last. */
export const pageOf = <T>(items: readonly T[], o: PageOptions<T>): { items: T[]; next: string | null } => {
  const start = o.after === undefined ? 0 : firstAfter(items, o.after, o.keyOf);
  const page: T[] = [];
  let bytes = 0;
  for (let i = start; i < items.length && page.length < o.limit; i++) {
    const size = jsonBytes(items[i]);
    if (page.length && bytes + size > o.maxBytes) break;
    bytes += size;
    page.push(items[i]!);
  }
  const last = page.at(-1);
  return { items: page, next: last && start + page.length < items.length ? o.keyOf(last) : null };
};

/** Sorts by key (plain code-unit order, as `pageOf` compares). */
export const sortByKey = <T>(items: readonly T[], keyOf: (item: T) => string): T[] =>
  items
    .map((item) => ({ item, key: keyOf(item) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((e) => e.item);

/** An answer kept for the pages after the first, under its id. */
export interface Snapshot<A> {
  id: string;
  value: A;
}

/**
 * Answers kept for the pages after the first, each under an id, for `ttlMs` from when it was put
 * and at most `max` at once (the oldest goes first): memory stays bounded whoever asks.
 */
export class Snapshots<T> {
  private readonly kept = new Map<string, { at: number; value: T }>();
  private next = 0;
  private readonly ttlMs: number;
  private readonly max: number;

  constructor(ttlMs: number, max: number) {
    this.ttlMs = ttlMs;
    this.max = max;
  }

  put(value: T): string {
    const id = `${Date.now().toString(36)}.${(this.next++).toString(36)}`;
    this.kept.set(id, { at: Date.now(), value });
    for (const [k, v] of this.kept)
      if (this.kept.size > this.max || Date.now() - v.at > this.ttlMs) this.kept.delete(k);
    return id;
  }

  /** The answer kept under `id`, or else a fresh one from `make`, kept under a new id. */
  async keptOr(id: string | undefined, make: () => Promise<T>): Promise<Snapshot<T>> {
    const kept = id === undefined ? undefined : this.get(id);
    if (kept !== undefined && id !== undefined) return { id, value: kept };
    const value = await make();
    return { id: this.put(value), value };
  }

  get(id: string): T | undefined {
    const hit = this.kept.get(id);
    if (hit && Date.now() - hit.at > this.ttlMs) this.kept.delete(id);
    return hit && this.kept.has(id) ? hit.value : undefined;
  }
}
