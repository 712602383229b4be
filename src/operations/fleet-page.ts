/**
 * How the fleet operations cut their answers into pages, for every surface alike: each answer's
 * stable order (the hosts that matter most first), its filters, and pages of at most `limit` items
 * and about 40 KB, so that an assistant can hold one (the text and the structured copy of an MCP
 * result stay under 100 KB). The next page is cut from the same snapshot while it is kept.
 */
import type { FleetHostStatus, FleetSetHost } from '../domain/fleet.ts';
import { decodeCursor, encodeCursor, fingerprint, pageOf, type Snapshot, sortByKey } from '../lib/paging.ts';

/** The JSON of one page's items stays under this many bytes (one item at least). */
export const PAGE_BYTES = 40_000;

export interface PageAsk {
  limit: number;
  cursor?: string | undefined;
}

/**
 * The highest burst penalty first, none last: seven digits (the leading 1 of 10,000,000 cut off), so
 * that keys compare as the numbers do.
 */
const penaltyKey = (p: number | null) =>
  p === null
    ? '9999999'
    : String(10_000_000 + Math.min(9_999_998, Math.max(0, 5_000_000 - Math.round(p * 10)))).slice(1);

/** The failures, then the hosts advised to switch, then the rest; each by burst penalty, then name. */
export const statusKey = (h: FleetHostStatus): string =>
  `${h.status !== 'ok' ? 0 : h.recommendation?.changeRecommended ? 1 : 2}${penaltyKey(h.burstPenaltyPercent)}${h.name}`;

/** The failures, then the hosts changed (or that would change), then the rest; each by name. */
export const setKey = (h: FleetSetHost): string => `${h.error ? 0 : h.changed ? 1 : 2}${h.name}`;

export const nameKey = (h: { name: string }): string => h.name;

/**
 * The items of each snapshot in their order, sorted once however many pages are cut from it, and
 * those matching each set of filters (by fingerprint), filtered once.
 */
const ranked = new WeakMap<object, { all: unknown[]; matching: Map<string, unknown[]> }>();

/**
 * One page of a snapshot's items: those `keep` keeps, in `keyOf` order, after the cursor's key.
 * `filters` are every input that decides which items match (a cursor carries their fingerprint).
 */
export const paged = async <A extends object, T>(
  input: PageAsk,
  filters: Record<string, unknown>,
  load: (snapshot: string | undefined) => Promise<Snapshot<A>>,
  itemsOf: (answer: A) => T[],
  keyOf: (item: T) => string,
  keep?: (item: T) => boolean,
): Promise<{ answer: A; items: T[]; matched: number; nextCursor: string | null }> => {
  const fp = fingerprint(filters);
  const cursor = input.cursor === undefined ? undefined : decodeCursor(input.cursor, fp);
  const snap = await load(cursor?.snapshot);
  let r = ranked.get(snap.value) as { all: T[]; matching: Map<string, T[]> } | undefined;
  if (!r) {
    r = { all: sortByKey(itemsOf(snap.value), keyOf), matching: new Map() };
    ranked.set(snap.value, r);
  }
  let matching = r.matching.get(fp);
  if (!matching) {
    matching = keep ? r.all.filter(keep) : r.all;
    r.matching.set(fp, matching);
  }
  const page = pageOf(matching, { limit: input.limit, maxBytes: PAGE_BYTES, after: cursor?.after, keyOf });
  return {
    answer: snap.value,
    items: page.items,
    matched: matching.length,
    nextCursor:
      page.next === null ? null : encodeCursor({ snapshot: snap.id, after: page.next, filters: fp }),
  };
};

/** The status filters as one test of a host. */
export const statusFilter =
  (f: {
    status?: string[] | undefined;
    kind?: string[] | undefined;
    switchRecommended?: boolean | undefined;
  }) =>
  (h: FleetHostStatus): boolean =>
    (!f.status?.length || f.status.includes(h.status)) &&
    (!f.kind?.length || (h.plan !== null && f.kind.includes(h.plan.kind))) &&
    (f.switchRecommended === undefined ||
      (h.recommendation?.changeRecommended ?? false) === f.switchRecommended);
