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
import { exchange } from './client.ts';
import { asAgentFailure } from './failure.ts';
import type { PrometheusTarget } from './file.ts';

/** 10,000 hosts answer in a few MiB per query; this bounds a Prometheus gone wrong. */
const MAX_ANSWER_BYTES = 128 * 1024 * 1024;
/** The resolution of the search for an unreachable host's last sample (its time is exact to this). */
const LAST_SAMPLE_STEP = '10s';
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

/** The queries of the status: each aggregated to the host label (and the labels it reads). */
export const statusQueries = (t: PrometheusTarget) => {
  const sel = t.selector;
  const H = t.hostLabel;
  const facts = [
    'scrape_duration_seconds',
    'powerplan_backend_up',
    'powerplan_policy_managed',
    'powerplan_plan_settable',
    'powerplan_holds_active',
    'powerplan_plan_change_recommended',
  ];
  return {
    /** Every host scraped within the lookback, with its tags and address. */
    seen: `max by (${H}, ${t.tagsLabel}, instance) (last_over_time(up{${sel}}[${t.lookback}]))`,
    up: `max by (${H}) (up{${sel}})`,
    scrapedAt: `max by (${H}) (timestamp(up{${sel}}))`,
    facts: `max by (__name__, ${H}) ({__name__=~"${facts.join('|')}", ${sel}})`,
    plan: `max by (${H}, id, name, kind, owner) (powerplan_active_plan_info{${sel}})`,
    advice: `max by (${H}, id, name, kind) (powerplan_recommended_plan_info{${sel}})`,
    desired: `max by (${H}, status) (powerplan_desired_plan_status{${sel}}) == 1`,
    burst: `max by (${H}, gap_seconds) (powerplan_benchmark_burst_penalty_ratio{${sel}})`,
    /** The newest sample of the agent's own series (stale-marked when a scrape fails). */
    lastSample: (hosts?: string[]) =>
      `max by (${H}) (max_over_time(timestamp(powerplan_backend_up{${sel}${
        hosts ? `, ${H}=~${anyOf(hosts)}` : ''
      }})[${t.lookback}:${LAST_SAMPLE_STEP}]))`,
  };
};

const iso = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString();

/** Tags from the tags label (`,sql,prod,`), only those a fleet tag may be. */
const tagsOf = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .filter((t) => FLEET_NAME.test(t))
    .sort();

/** Samples by host (the host label's value); hosts that are not valid fleet names are left out. */
const byHost = (samples: Sample[], hostLabel: string): Map<string, Sample[]> => {
  const out = new Map<string, Sample[]>();
  for (const s of samples) {
    const name = s.metric[hostLabel];
    if (!name || !FLEET_NAME.test(name)) continue;
    const list = out.get(name);
    if (list) list.push(s);
    else out.set(name, [s]);
  }
  return out;
};

const num = (s: Sample | undefined): number | null => {
  if (!s) return null;
  const v = Number(s.value[1]);
  return Number.isFinite(v) ? v : null;
};

export interface SeenHost {
  name: string;
  tags: string[];
  instance: string;
}

/** Every host Prometheus scraped within the lookback, in name order. */
export const seenHosts = async (ask: PrometheusAsk, time: number): Promise<SeenHost[]> => {
  const t = ask.target;
  const seen = byHost(await instantQuery(ask, statusQueries(t).seen, time), t.hostLabel);
  return [...seen.entries()]
    .map(([name, [s]]) => ({
      name,
      tags: tagsOf(s!.metric[t.tagsLabel]),
      instance: s!.metric.instance ?? '',
    }))
    .sort((a, b) => a.name.localeCompare(b.name, 'en'));
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
  const q = statusQueries(t);
  const time = Date.now() / 1000;
  const H = t.hostLabel;
  const run = (query: string) => instantQuery(ask, query, time).then((r) => byHost(r, H));
  const [all, up, scrapedAt, facts, plan, advice, desired, burst] = await Promise.all([
    seenHosts(ask, time),
    run(q.up),
    run(q.scrapedAt),
    run(q.facts),
    run(q.plan),
    run(q.advice),
    run(q.desired),
    run(q.burst),
  ]);
  const hosts = pick(all);
  const fact = (name: string, metric: string) =>
    num(facts.get(name)?.find((s) => s.metric.__name__ === metric));
  const isOk = (h: SeenHost) => num(up.get(h.name)?.[0]) === 1 && fact(h.name, 'powerplan_backend_up') === 1;
  let queries = 8;
  const lastSample = new Map<string, number>();
  const failed = hosts.filter((h) => !isOk(h)).map((h) => h.name);
  if (failed.length) {
    queries++;
    const named = failed.length <= NAMED_SEARCH_LIMIT ? failed : undefined;
    for (const [name, [s]] of await run(q.lastSample(named))) {
      const v = num(s);
      if (v !== null) lastSample.set(name, v);
    }
  }
  const statuses = hosts.map((h): FleetHostStatus => {
    const upValue = num(up.get(h.name)?.[0]);
    const scraped = num(scrapedAt.get(h.name)?.[0]);
    const base = {
      name: h.name,
      url: h.instance,
      tags: h.tags,
      checkedAt: iso(scraped ?? time),
      durationMs: Math.round((fact(h.name, 'scrape_duration_seconds') ?? 0) * 1000),
    };
    const last = upValue === 1 ? (scraped ?? null) : (lastSample.get(h.name) ?? null);
    const lastSampleAt = last === null ? null : iso(last);
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
    if (upValue === null)
      return failure(
        'unreachable',
        'Not scraped',
        `Prometheus no longer scrapes this host (its target is gone or its samples are stale)${since}.`,
      );
    if (upValue !== 1)
      return failure(
        'unreachable',
        'Scrape failed',
        `Prometheus' last scrape failed at ${base.checkedAt} (up == 0; the reason is on its targets page)${since}.`,
      );
    const backendUp = fact(h.name, 'powerplan_backend_up');
    if (backendUp === null)
      return failure(
        'error',
        'Not an agent',
        'The target exposes no powerplan metrics: is it a powerplan agent?',
      );
    if (backendUp !== 1)
      return failure(
        'error',
        'Backend failed',
        'The agent answered the scrape but could not read its power plan.',
      );
    const p = plan.get(h.name)?.[0]?.metric;
    const kind = PlanKind.safeParse(p?.kind);
    const owner = Owner.safeParse(p?.owner);
    const a = advice.get(h.name)?.[0]?.metric;
    const adviceKind = PlanKind.safeParse(a?.kind);
    const change = fact(h.name, 'powerplan_plan_change_recommended');
    const gaps = (burst.get(h.name) ?? []).filter((s) => Number.isFinite(Number(s.metric.gap_seconds)));
    const longest = gaps.sort((x, y) => Number(y.metric.gap_seconds) - Number(x.metric.gap_seconds))[0];
    const penalty = num(longest);
    const drift = desired.get(h.name)?.[0]?.metric.status;
    const bool = (metric: string) => {
      const v = fact(h.name, metric);
      return v === null ? null : v === 1;
    };
    const holds = fact(h.name, 'powerplan_holds_active');
    return {
      ...base,
      status: 'ok',
      lastSampleAt,
      plan: p && kind.success ? { id: p.id ?? '', name: p.name ?? '', kind: kind.data } : null,
      owner: owner.success ? owner.data : null,
      canSet: bool('powerplan_plan_settable'),
      policyManaged: bool('powerplan_policy_managed'),
      holds: holds === null ? null : Math.round(holds),
      drift:
        (['in-desired-state', 'drift', 'held', 'policy-managed', 'unknown-plan'] as const).find(
          (s) => s === drift,
        ) ?? null,
      burstPenaltyPercent: penalty === null ? null : Math.round(penalty * 1000) / 10,
      recommendation:
        change === null
          ? null
          : {
              summary:
                change === 1
                  ? `Switch to ${a?.name ?? 'another plan'}${adviceKind.success ? ` (${adviceKind.data})` : ''}.`
                  : `Nothing to change: keep ${p?.name ?? 'the plan in force'}.`,
              changeRecommended: change === 1,
              kind: adviceKind.success ? adviceKind.data : null,
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
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name, 'en'));
};
