/**
 * The fleet from the Prometheus that scrapes the agents (docs/FLEET.md). The status is one fixed
 * set of instant queries for the whole fleet, whatever its size, each aggregated down to the host
 * label so that an answer stays small; the agents' URLs for a change come from Prometheus' active
 * targets. Prometheus is asked over its HTTP API (POST forms, so a long host list never meets a URL
 * limit) with its own credentials and CA; redirects are not followed, answers are capped.
 */
import type http from 'node:http';
import { join } from 'node:path';
import { PowerPlanError } from '../../domain/errors.ts';
import {
  AgentUrl,
  FLEET_NAME,
  type FleetHostEntry,
  type FleetHostStatus,
  type FleetStatus,
} from '../../domain/fleet.ts';
import { Owner, PlanKind } from '../../domain/schemas.ts';
import { mapLimited } from '../../lib/map-limited.ts';
import { exchange } from './client.ts';
import { asAgentFailure } from './failure.ts';
import type { PrometheusTarget } from './file.ts';

/** 10,000 hosts answer in a few MiB per query; this bounds a Prometheus gone wrong. */
const MAX_ANSWER_BYTES = 128 * 1024 * 1024;
/**
 * The search for unreachable hosts' last samples evaluates about this many points (hosts x steps
 * over the lookback): its step is as fine as that allows, 1 s at best (then the time is exact for
 * any scrape interval of a second or more).
 */
const LAST_SAMPLE_POINTS = 200_000;

const durationSeconds = (d: string): number => {
  const unit: Record<string, number> = {
    ms: 0.001,
    s: 1,
    m: 60,
    h: 3600,
    d: 86_400,
    w: 604_800,
    y: 31_536_000,
  };
  let total = 0;
  for (const m of d.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * unit[m[2]!]!;
  return total;
};
/** Up to this many unreachable hosts, the last-sample search is limited to them by name. */
const NAMED_SEARCH_LIMIT = 1000;

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PrometheusAsk {
  target: PrometheusTarget;
  agent: http.Agent;
  timeoutMs: number;
}

/** One call of Prometheus' HTTP API; its `data`, or a PowerPlanError naming Prometheus. */
const call = async (ask: PrometheusAsk, path: string, form?: Record<string, string>): Promise<unknown> => {
  const { target } = ask;
  const fail = (detail: string, code: 'upstream' | 'timeout' = 'upstream') =>
    new PowerPlanError(code, `Prometheus at ${target.url}: ${detail}`);
  const body = form ? new URLSearchParams(form).toString() : undefined;
  let answer: Awaited<ReturnType<typeof exchange>>;
  try {
    answer = await exchange(new URL(target.url + path), ask.agent, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        accept: 'application/json',
        ...(target.authorization ? { authorization: target.authorization } : {}),
        ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(ask.timeoutMs),
      maxBytes: MAX_ANSWER_BYTES,
    });
  } catch (e) {
    const f = asAgentFailure(e);
    // The only signal here is the timeout's.
    if (f.problem.title === 'Cancelled') throw fail(`no answer within ${ask.timeoutMs} ms.`, 'timeout');
    throw fail(`${f.problem.title}: ${f.problem.detail}`);
  }
  const { status, text } = answer;
  if (status >= 300 && status < 400)
    throw fail(
      `answered ${status} (to ${answer.location ?? 'nowhere'}); redirects are not followed: put the final URL in the fleet file.`,
    );
  if (status === 401 || status === 403)
    throw fail(`refused the credentials (HTTP ${status}); check tokenFile or basicAuth in the fleet file.`);
  let json: { status?: unknown; data?: unknown; error?: unknown; errorType?: unknown };
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(`answered HTTP ${status} with something that is not JSON: is the url a Prometheus server?`);
  }
  if (json.status !== 'success')
    throw fail(
      typeof json.error === 'string'
        ? `${String(json.errorType ?? 'error')}: ${json.error}`
        : `answered HTTP ${status} without a result.`,
    );
  return json.data;
};

const isSample = (s: unknown): s is Sample => {
  const x = s as Sample;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.metric === 'object' &&
    x.metric !== null &&
    Array.isArray(x.value) &&
    typeof x.value[0] === 'number' &&
    typeof x.value[1] === 'string'
  );
};

/** An instant query at `time` (Unix seconds); the samples of its vector. */
export const instantQuery = async (ask: PrometheusAsk, query: string, time: number): Promise<Sample[]> => {
  const data = (await call(ask, '/api/v1/query', { query, time: time.toFixed(3) })) as {
    resultType?: unknown;
    result?: unknown;
  };
  if (data?.resultType !== 'vector' || !Array.isArray(data.result) || !data.result.every(isSample))
    throw new PowerPlanError(
      'upstream',
      `Prometheus at ${ask.target.url}: the answer to ${query} is not an instant vector.`,
    );
  return data.result;
};

/** PromQL string literal of a fixed set of names, for `label=~"..."`. */
const anyOf = (names: string[]) => `"^(?:${names.map((n) => n.replaceAll('.', '\\\\.')).join('|')})$"`;

/**
 * The queries of the status, each aggregated to the host label (and the labels it reads). Only
 * what every host has is asked of every host (its scrape, plan, benchmark); a yes/no fact is asked
 * as the hosts where it departs from the usual value (`== 1`, `> 0`), so most answers are short.
 * Agents of this version expose every one of these metrics whenever their backend answers.
 */
export const statusQueries = (t: PrometheusTarget) => {
  const sel = t.selector;
  const H = t.hostLabel;
  const perHost = (expr: string) => `max by (${H}) (${expr})`;
  return {
    /** Hosts scraped now (within Prometheus' 5-minute lookback, not stale): tags, address, last scrape. */
    current: `max by (${H}, ${t.tagsLabel}, instance) (timestamp(up{${sel}}))`,
    /** Hosts scraped within the lookback but no longer. */
    gone: `max by (${H}, ${t.tagsLabel}, instance) (last_over_time(up{${sel}}[${t.lookback}]) unless up{${sel}})`,
    scrapeSeconds: perHost(`scrape_duration_seconds{${sel}}`),
    failing: `${perHost(`up{${sel}}`)} == 0`,
    notAgent: perHost(`up{${sel}} == 1 unless powerplan_backend_up{${sel}}`),
    backendDown: `${perHost(`powerplan_backend_up{${sel}}`)} == 0`,
    plan: `max by (${H}, id, name, kind, owner, edited) (powerplan_active_plan_info{${sel}})`,
    policyManaged: `${perHost(`powerplan_policy_managed{${sel}}`)} == 1`,
    notSettable: `${perHost(`powerplan_plan_settable{${sel}}`)} == 0`,
    holds: `${perHost(`powerplan_holds_active{${sel}}`)} > 0`,
    /** Hosts advised to switch, with the plan to switch to. */
    advised: `max by (${H}, id, name, kind) (powerplan_recommended_plan_info{${sel}} and ignoring (id, name, kind) powerplan_plan_change_recommended{${sel}} == 1)`,
    /** Hosts whose advice could not be worked out. */
    noAdvice: perHost(`powerplan_backend_up{${sel}} unless powerplan_plan_change_recommended{${sel}}`),
    desired: `max by (${H}, status) (powerplan_desired_plan_status{${sel}}) == 1`,
    /** Settings that did not take effect at the last switch (absent: not read back). */
    mismatches: perHost(`powerplan_plan_settings_not_in_force{${sel}}`),
    /** Who decides the processor clock and idle states. */
    controlledBy: `max by (${H}, decided_by) (powerplan_processor_control_info{${sel}})`,
    burst: `max by (${H}, gap_seconds) (powerplan_benchmark_burst_penalty_ratio{${sel}})`,
    /** The newest sample of the agent's own series (stale-marked when a scrape fails), for `count` hosts. */
    lastSample: (count: number, hosts?: string[]) => {
      const step = Math.max(1, Math.ceil((durationSeconds(t.lookback) * count) / LAST_SAMPLE_POINTS));
      return perHost(
        `max_over_time(timestamp(powerplan_backend_up{${sel}${hosts ? `, ${H}=~${anyOf(hosts)}` : ''}})[${t.lookback}:${step}s])`,
      );
    },
  };
};

const iso = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString();

/** Tags from the tags label (`,sql,prod,`), only those a fleet tag may be. */
const tagsOf = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .filter((t) => FLEET_NAME.test(t))
    .sort();

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

/** Every host Prometheus scrapes now or scraped within the lookback, in name order (2 queries). */
export const seenHosts = async (ask: PrometheusAsk, time: number): Promise<SeenHost[]> => {
  const t = ask.target;
  const q = statusQueries(t);
  const host = (name: string, m: Record<string, string>) => ({
    name,
    tags: tagsOf(m[t.tagsLabel]),
    instance: m.instance ?? '',
  });
  const out = new Map<string, SeenHost>();
  for (const s of await instantQuery(ask, q.current, time)) {
    const name = s.metric[t.hostLabel];
    const at = num(s);
    if (name && FLEET_NAME.test(name) && at !== null && !out.has(name))
      out.set(name, { ...host(name, s.metric), scrapedAt: at });
  }
  for (const [name, m] of perHost(await instantQuery(ask, q.gone, time), t.hostLabel, firstLabels))
    if (!out.has(name)) out.set(name, host(name, m));
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
};

const empty = {
  plan: null,
  owner: null,
  canSet: null,
  policyManaged: null,
  holds: null,
  drift: null,
  burstPenaltyPercent: null,
  recommendation: null,
} as const;

const desiredStatuses = ['in-desired-state', 'drift', 'held', 'policy-managed', 'unknown-plan'] as const;
const controlledBy = ['os', 'firmware', 'hypervisor', 'unknown'] as const;

/** Queries Prometheus answers for one status at a time: it has a couple of cores, not a farm. */
const QUERY_CONCURRENCY = 3;

/**
 * The fleet status from Prometheus' latest scrapes, for the hosts `pick` keeps of those seen.
 * `up == 0` (the last scrape failed) and hosts no longer scraped (target gone, samples stale) are
 * `unreachable`, with the time of the host's last sample.
 */
export const prometheusStatus = async (
  ask: PrometheusAsk,
  pick: (hosts: SeenHost[]) => SeenHost[],
): Promise<FleetStatus> => {
  const t = ask.target;
  const H = t.hostLabel;
  const q = statusQueries(t);
  const time = Date.now() / 1000;
  let queries = 0;
  const fold = async <T>(query: string, f: (prev: T | undefined, s: Sample) => T | undefined) => {
    queries++;
    return perHost(await instantQuery(ask, query, time), H, f);
  };
  const numbers = (query: string) => fold(query, firstNumber);
  const labels = (query: string) => fold(query, firstLabels);
  // Each answer is folded as soon as it comes, a few at a time: memory stays at a few answers' worth.
  const jobs = {
    seen: () => seenHosts(ask, time).finally(() => (queries += 2)),
    scrapeSeconds: () => numbers(q.scrapeSeconds),
    failing: () => numbers(q.failing),
    notAgent: () => numbers(q.notAgent),
    backendDown: () => numbers(q.backendDown),
    plan: () => labels(q.plan),
    policyManaged: () => numbers(q.policyManaged),
    notSettable: () => numbers(q.notSettable),
    holds: () => numbers(q.holds),
    advised: () => labels(q.advised),
    noAdvice: () => numbers(q.noAdvice),
    desired: () => fold<string>(q.desired, (prev, s) => prev ?? s.metric.status),
    mismatches: () => numbers(q.mismatches),
    controlledBy: () => fold<string>(q.controlledBy, (prev, s) => prev ?? s.metric.decided_by),
    // The penalty after the longest idle gap, as the benchmark's summary has it.
    burst: () =>
      fold<{ gap: number; value: number }>(q.burst, (prev, s) => {
        const gap = Number(s.metric.gap_seconds);
        const value = num(s);
        if (!Number.isFinite(gap) || value === null || (prev && prev.gap >= gap)) return prev;
        return { gap, value };
      }),
  };
  type Jobs = typeof jobs;
  const keys = Object.keys(jobs) as (keyof Jobs)[];
  const answers = await mapLimited(keys, QUERY_CONCURRENCY, (k) => jobs[k]() as Promise<unknown>);
  const r = Object.fromEntries(keys.map((k, i) => [k, answers[i]])) as {
    [K in keyof Jobs]: Awaited<ReturnType<Jobs[K]>>;
  };
  const hosts = pick(r.seen);
  const isOk = (h: SeenHost) =>
    h.scrapedAt !== undefined &&
    !r.failing.has(h.name) &&
    !r.notAgent.has(h.name) &&
    !r.backendDown.has(h.name);
  const lastSample = new Map<string, number>();
  const failed = hosts.filter((h) => !isOk(h)).map((h) => h.name);
  if (failed.length) {
    const named = failed.length <= NAMED_SEARCH_LIMIT ? failed : undefined;
    for (const [name, v] of await numbers(q.lastSample(named ? failed.length : r.seen.length, named)))
      lastSample.set(name, v);
  }
  const statuses = hosts.map((h): FleetHostStatus => {
    const scraped = h.scrapedAt;
    const base = {
      name: h.name,
      url: h.instance,
      tags: h.tags,
      checkedAt: iso(scraped ?? time),
      durationMs: Math.round((r.scrapeSeconds.get(h.name) ?? 0) * 1000),
    };
    const last = lastSample.get(h.name);
    const lastSampleAt = last === undefined ? null : iso(last);
    const since = lastSampleAt
      ? `; its last sample is from ${lastSampleAt}`
      : `; no sample within ${t.lookback}`;
    const failure = (status: 'unreachable' | 'error', title: string, detail: string): FleetHostStatus => ({
      ...base,
      ...empty,
      status,
      lastSampleAt,
      error: { title, detail },
    });
    if (scraped === undefined)
      return failure(
        'unreachable',
        'Not scraped',
        `Prometheus no longer scrapes this host (its target is gone or its samples are stale)${since}.`,
      );
    if (r.failing.has(h.name))
      return failure(
        'unreachable',
        'Scrape failed',
        `Prometheus' last scrape failed at ${base.checkedAt} (up == 0; the reason is on its targets page)${since}.`,
      );
    if (r.notAgent.has(h.name))
      return failure(
        'error',
        'Not an agent',
        'The target exposes no powerplan metrics: is it a powerplan agent?',
      );
    if (r.backendDown.has(h.name))
      return failure(
        'error',
        'Backend failed',
        'The agent answered the scrape but could not read its power plan.',
      );
    const p = r.plan.get(h.name);
    const kind = PlanKind.safeParse(p?.kind);
    const owner = Owner.safeParse(p?.owner);
    const a = r.advised.get(h.name);
    const adviceKind = PlanKind.safeParse(a?.kind);
    const plan = p && kind.success ? { id: p.id ?? '', name: p.name ?? '', kind: kind.data } : null;
    const penalty = r.burst.get(h.name)?.value ?? null;
    const drift = r.desired.get(h.name);
    const holds = r.holds.get(h.name);
    const control = r.controlledBy.get(h.name);
    return {
      ...base,
      status: 'ok',
      plan,
      owner: owner.success ? owner.data : null,
      canSet: !r.notSettable.has(h.name),
      policyManaged: r.policyManaged.has(h.name),
      holds: holds === undefined ? 0 : Math.round(holds),
      drift: desiredStatuses.find((s) => s === drift) ?? null,
      burstPenaltyPercent: penalty === null ? null : Math.round(penalty * 1000) / 10,
      edited: p?.edited === 'true' ? true : p?.edited === 'false' ? false : null,
      mismatches: r.mismatches.has(h.name) ? Math.round(r.mismatches.get(h.name)!) : null,
      controlledBy: controlledBy.find((c) => c === control) ?? null,
      // Advised to switch: the plan named by the advice; otherwise the advice is the plan in force.
      recommendation: r.noAdvice.has(h.name)
        ? null
        : a
          ? {
              summary: `Switch to ${a.name ?? 'another plan'}${adviceKind.success ? ` (${adviceKind.data})` : ''}.`,
              changeRecommended: true,
              kind: adviceKind.success ? adviceKind.data : null,
            }
          : {
              summary: `Nothing to change: keep ${plan?.name ?? 'the plan in force'}.`,
              changeRecommended: false,
              kind: plan?.kind ?? null,
            },
    };
  });
  const count = (s: FleetHostStatus['status']) => statuses.filter((h) => h.status === s).length;
  return {
    source: { kind: 'prometheus', name: t.url, evaluatedAt: iso(time), queries },
    summary: {
      total: statuses.length,
      ok: count('ok'),
      unreachable: count('unreachable'),
      unauthorized: count('unauthorized'),
      error: count('error'),
      changeRecommended: statuses.filter((h) => h.recommendation?.changeRecommended).length,
    },
    hosts: statuses,
  };
};

interface ActiveTarget {
  labels: Record<string, string>;
  scrapeUrl: string;
}

/** A label set as one key, the metric name left out. */
const labelKey = (labels: Record<string, string>) =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([k]) => k !== '__name__')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );

/**
 * The agents as fleet entries, from Prometheus' active targets that the selector matches (the
 * targets whose `up` series it selects): the base URL is the scrape URL without `/metrics`; the
 * token and CA come from the source's `agents` settings.
 */
export const discoverAgents = async (ask: PrometheusAsk): Promise<FleetHostEntry[]> => {
  const t = ask.target;
  const [targets, up] = await Promise.all([
    call(ask, '/api/v1/targets?state=active') as Promise<{ activeTargets?: unknown }>,
    instantQuery(ask, `up{${t.selector}}`, Date.now() / 1000),
  ]);
  const selected = new Set(up.map((s) => labelKey(s.metric)));
  const active = (Array.isArray(targets?.activeTargets) ? targets.activeTargets : []) as ActiveTarget[];
  const out = new Map<string, FleetHostEntry>();
  for (const a of active) {
    if (typeof a?.labels !== 'object' || typeof a.scrapeUrl !== 'string' || !selected.has(labelKey(a.labels)))
      continue;
    const name = a.labels[t.hostLabel];
    if (!name || !FLEET_NAME.test(name) || out.has(name)) continue;
    let url: string;
    try {
      const u = new URL(a.scrapeUrl);
      url = `${u.origin}${u.pathname.replace(/\/metrics\/?$/, '').replace(/\/+$/, '')}`;
    } catch {
      continue;
    }
    if (!AgentUrl.safeParse(url).success) continue;
    const tokenFile =
      t.agents.tokenFile ?? (t.agents.tokenDir ? join(t.agents.tokenDir, `${name}.token`) : undefined);
    out.set(name, {
      name,
      url,
      tags: tagsOf(a.labels[t.tagsLabel]),
      ...(tokenFile ? { tokenFile } : {}),
      ...(t.agents.caFile ? { caFile: t.agents.caFile } : {}),
    });
  }
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
};
