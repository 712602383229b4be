/**
 * The fleet status from the Prometheus that scrapes the agents (docs/FLEET.md): one fixed set of
 * instant queries for the whole fleet, whatever its size, each aggregated down to the host label
 * so that an answer stays small, and each answer folded into one value per host as it comes.
 */

import {
  type FleetHostStatus,
  type FleetStatusAll,
  fleetStatus,
  unansweredHost,
} from '../../domain/fleet.ts';
import { FLEET_NAME } from '../../domain/fleet-file.ts';
import { Owner, PlanKind } from '../../domain/schemas.ts';
import { limiter } from '../../lib/map-limited.ts';
import { instantQuery, type PrometheusAsk, type Sample } from './prometheus-api.ts';
import { statusQueries, tagsOf } from './promql.ts';

/** Up to this many unreachable hosts, the last-sample search is limited to them by name. */
const NAMED_SEARCH_LIMIT = 1000;

const iso = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString();

const num = (s: Sample): number | null => {
  const v = Number(s.value[1]);
  return Number.isFinite(v) ? v : null;
};

/**
 * Folds an answer into one value per host as it arrives (so that the samples need not be kept):
 * `fold(previous, sample)`; hosts that are not valid fleet names are left out.
 */
const perHost = <T>(
  samples: Sample[],
  hostLabel: string,
  fold: (prev: T | undefined, s: Sample) => T | undefined,
): Map<string, T> => {
  const out = new Map<string, T>();
  for (const s of samples) {
    const name = s.metric[hostLabel];
    if (!name || !FLEET_NAME.test(name)) continue;
    const v = fold(out.get(name), s);
    if (v !== undefined) out.set(name, v);
  }
  return out;
};
const firstNumber = (prev: number | undefined, s: Sample) => prev ?? num(s) ?? undefined;
const firstLabels = (prev: Record<string, string> | undefined, s: Sample) => prev ?? s.metric;

export interface SeenHost {
  name: string;
  tags: string[];
  instance: string;
  /** The time of its last scrape, when Prometheus scrapes it now. */
  scrapedAt?: number;
}

/** Runs a query when one of the status' slots is free (`first`: before those waiting). */
type Slots = ReturnType<typeof limiter>;

/** Every host Prometheus scrapes now or scraped within the lookback, in name order (2 queries). */
const seenHosts = async (ask: PrometheusAsk, time: number, run: Slots): Promise<SeenHost[]> => {
  const t = ask.target;
  const q = statusQueries(t);
  const host = (name: string, m: Record<string, string>) => ({
    name,
    tags: tagsOf(m[t.tagsLabel]),
    instance: m.instance ?? '',
  });
  const [current, gone] = await Promise.all([
    run(() => instantQuery(ask, q.current, time)),
    run(() => instantQuery(ask, q.gone, time)),
  ]);
  const out = new Map<string, SeenHost>();
  for (const s of current) {
    const name = s.metric[t.hostLabel];
    const at = num(s);
    if (name && FLEET_NAME.test(name) && at !== null && !out.has(name))
      out.set(name, { ...host(name, s.metric), scrapedAt: at });
  }
  for (const [name, m] of perHost(gone, t.hostLabel, firstLabels))
    if (!out.has(name)) out.set(name, host(name, m));
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
};

/** A test of whether a label value is one of `values` (10,000 hosts x 5 labels per status). */
const oneOf = <T extends string>(values: readonly T[]) => {
  const set = new Set<string>(values);
  return (v: string | undefined): T | null => (v !== undefined && set.has(v) ? (v as T) : null);
};
const planKind = oneOf(PlanKind.options);
const owner = oneOf(Owner.options);
const desiredStatus = oneOf(['in-desired-state', 'drift', 'held', 'policy-managed', 'unknown-plan'] as const);
const controlledBy = oneOf(['os', 'firmware', 'hypervisor', 'unknown'] as const);

/** Queries Prometheus answers for one status at a time: it has a couple of cores, not a farm. */
const QUERY_CONCURRENCY = 3;

/**
 * The answers of the status' queries, each folded to one value per host, for the hosts `pick` keeps
 * of those seen. The queries that decide which hosts failed are asked first; the last-sample search
 * for those hosts needs them and starts as soon as they are in, ahead of the queries still waiting.
 * The rest go largest first, so that the status does not end waiting on one long query alone.
 */
const answers = async (ask: PrometheusAsk, time: number, pick: (hosts: SeenHost[]) => SeenHost[]) => {
  const q = statusQueries(ask.target);
  const run = limiter(QUERY_CONCURRENCY);
  let queries = 0;
  // Each answer is folded as soon as it comes, a few at a time: memory stays at a few answers' worth.
  const fold = <T>(query: string, f: (prev: T | undefined, s: Sample) => T | undefined, first = false) =>
    run(async () => {
      queries++;
      return perHost(await instantQuery(ask, query, time), ask.target.hostLabel, f);
    }, first);
  const numbers = (query: string, first = false) => fold(query, firstNumber, first);
  const labels = (query: string) => fold(query, firstLabels);
  const seen = seenHosts(ask, time, run).finally(() => (queries += 2));
  const failing = numbers(q.failing);
  const notAgent = numbers(q.notAgent);
  const backendDown = numbers(q.backendDown);
  const rest = {
    // The penalty after the longest idle gap, as the benchmark's summary has it.
    burst: fold<{ gap: number; value: number }>(q.burst, (prev, s) => {
      const gap = Number(s.metric.gap_seconds);
      const value = num(s);
      if (!Number.isFinite(gap) || value === null || (prev && prev.gap >= gap)) return prev;
      return { gap, value };
    }),
    advised: labels(q.advised),
    plan: labels(q.plan),
    scrapeSeconds: numbers(q.scrapeSeconds),
    noAdvice: numbers(q.noAdvice),
    desired: fold<string>(q.desired, (prev, s) => prev ?? s.metric.status),
    policyManaged: numbers(q.policyManaged),
    notSettable: numbers(q.notSettable),
    holds: numbers(q.holds),
    controlledBy: fold<string>(q.controlledBy, (prev, s) => prev ?? s.metric.decided_by),
    workloadCost: numbers(q.workloadCost),
    mismatches: numbers(q.mismatches),
  };
  const failed = Promise.all([seen, failing, notAgent, backendDown]).then(
    async ([seen, failing, notAgent, backendDown]) => {
      const hosts = pick(seen);
      const failures = new Map(hosts.map((h) => [h.name, failureOf(h, { failing, notAgent, backendDown })]));
      const names = hosts.filter((h) => failures.get(h.name)).map((h) => h.name);
      // The time of the newest sample of the hosts that are not ok, one more query.
      const named = names.length <= NAMED_SEARCH_LIMIT ? names : undefined;
      const lastSample = names.length
        ? await numbers(q.lastSample(named ? names.length : seen.length, named), true)
        : new Map<string, number>();
      return { hosts, failures, lastSample };
    },
  );
  type Rest = typeof rest;
  const keys = Object.keys(rest) as (keyof Rest)[];
  const [f, ...values] = await Promise.all([failed, ...keys.map((k) => rest[k] as Promise<unknown>)]);
  const r = Object.fromEntries(keys.map((k, i) => [k, values[i]])) as {
    [K in keyof Rest]: Awaited<Rest[K]>;
  };
  return { ...f, r, queries };
};
type Answers = Awaited<ReturnType<typeof answers>>['r'];

type Failure = { status: 'unreachable' | 'error'; title: string; detail: string };

/** Why a host seen by Prometheus has no answer to report, if it has none. */
const failureOf = (
  h: SeenHost,
  r: Record<'failing' | 'notAgent' | 'backendDown', Map<string, number>>,
): Failure | undefined => {
  const found: [Failure['status'], string, string] | undefined =
    h.scrapedAt === undefined
      ? [
          'unreachable',
          'Not scraped',
          'Prometheus no longer scrapes this host (its target is gone or its samples are stale)',
        ]
      : r.failing.has(h.name)
        ? [
            'unreachable',
            'Scrape failed',
            `Prometheus' last scrape failed at ${iso(h.scrapedAt)} (up == 0; the reason is on its targets page)`,
          ]
        : r.notAgent.has(h.name)
          ? ['error', 'Not an agent', 'The target exposes no powerplan metrics: is it a powerplan agent?']
          : r.backendDown.has(h.name)
            ? ['error', 'Backend failed', 'The agent answered the scrape but could not read its power plan.']
            : undefined;
  return found && { status: found[0], title: found[1], detail: found[2] };
};

/** One host that Prometheus scrapes and that answered, from the metrics its agent exposes. */
const answeredHost = (
  h: SeenHost,
  r: Answers,
  base: Pick<FleetHostStatus, 'name' | 'url' | 'tags' | 'checkedAt' | 'durationMs'>,
): FleetHostStatus => {
  const p = r.plan.get(h.name);
  const kind = planKind(p?.kind);
  const a = r.advised.get(h.name);
  const adviceKind = planKind(a?.kind);
  const plan = p && kind ? { id: p.id ?? '', name: p.name ?? '', kind } : null;
  const penalty = r.burst.get(h.name)?.value ?? null;
  const holds = r.holds.get(h.name);
  // Advised to switch: the plan named by the advice; otherwise the advice is the plan in force.
  const recommendation = r.noAdvice.has(h.name)
    ? null
    : a
      ? {
          summary: `Switch to ${a.name ?? 'another plan'}${adviceKind ? ` (${adviceKind})` : ''}.`,
          changeRecommended: true,
          kind: adviceKind,
        }
      : {
          summary: `Nothing to change: keep ${plan?.name ?? 'the plan in force'}.`,
          changeRecommended: false,
          kind: plan?.kind ?? null,
        };
  return {
    ...base,
    status: 'ok',
    plan,
    owner: owner(p?.owner),
    canSet: !r.notSettable.has(h.name),
    policyManaged: r.policyManaged.has(h.name),
    holds: holds === undefined ? 0 : Math.round(holds),
    drift: desiredStatus(r.desired.get(h.name)),
    burstPenaltyPercent: penalty === null ? null : Math.round(penalty * 1000) / 10,
    edited: p?.edited === 'true' ? true : p?.edited === 'false' ? false : null,
    mismatches: r.mismatches.has(h.name) ? Math.round(r.mismatches.get(h.name)!) : null,
    controlledBy: controlledBy(r.controlledBy.get(h.name)),
    workloadAddedPercent: r.workloadCost.has(h.name)
      ? Math.round(r.workloadCost.get(h.name)! * 1000) / 10
      : null,
    recommendation,
    // The plan's labels are the agent's words (its /metrics), and so is a summary that names them.
    reportedByAgent: [
      ...(plan ? ['/plan/id', '/plan/name'] : []),
      ...(recommendation && (a || plan) ? ['/recommendation/summary'] : []),
    ],
  };
};

/**
 * The fleet status from Prometheus' latest scrapes, for the hosts `pick` keeps of those seen.
 * `up == 0` (the last scrape failed) and hosts no longer scraped (target gone, samples stale) are
 * `unreachable`, with the time of the host's last sample.
 */
export const prometheusStatus = async (
  ask: PrometheusAsk,
  pick: (hosts: SeenHost[]) => SeenHost[],
): Promise<FleetStatusAll> => {
  const time = Date.now() / 1000;
  const { hosts, failures, lastSample, r, queries } = await answers(ask, time, pick);
  const statuses = hosts.map((h): FleetHostStatus => {
    const base = {
      name: h.name,
      url: h.instance,
      tags: h.tags,
      checkedAt: iso(h.scrapedAt ?? time),
      durationMs: Math.round((r.scrapeSeconds.get(h.name) ?? 0) * 1000),
    };
    const failure = failures.get(h.name);
    if (!failure) return answeredHost(h, r, base);
    const last = lastSample.get(h.name);
    const lastSampleAt = last === undefined ? null : iso(last);
    // A host that answered nothing says when it last did.
    const since =
      failure.status === 'error'
        ? ''
        : lastSampleAt
          ? `; its last sample is from ${lastSampleAt}.`
          : `; no sample within ${ask.target.lookback}.`;
    return unansweredHost({ ...base, lastSampleAt }, failure.status, {
      title: failure.title,
      detail: `${failure.detail}${since}`,
    });
  });
  return fleetStatus({ kind: 'prometheus', name: ask.target.url, evaluatedAt: iso(time), queries }, statuses);
};
