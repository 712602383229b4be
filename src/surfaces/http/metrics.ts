/**
 * Prometheus metrics at GET /metrics: the plan in force and its processor settings, the latest
 * benchmark, plan changes (from the audit log), HTTP request counts and latencies, and the process.
 * Each app has its own registry, never prom-client's global one, so several apps in one process
 * (tests, embedders) neither share nor clash. The read-only gauges are filled on scrape from one
 * read of the backend per scrape; nothing polls between scrapes.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Deps } from '../../deps.ts';
import type { Recommendation } from '../../domain/advice.ts';
import type { BenchmarkResult } from '../../domain/benchmark.ts';
import { errorMessage } from '../../domain/errors.ts';
import type { Effective } from '../../domain/idle.ts';
import type { AcDc, ActivePlan, DesiredSummary } from '../../domain/schemas.ts';
import { type Caller, requireScope } from '../../domain/scopes.ts';
import { AuditChangeCounter } from '../../lib/audit-log.ts';
import { activePlan } from '../../services/plans.ts';
import { advise } from '../../services/recommendation.ts';
import { type ProcessMetrics, registerProcessMetrics } from './process-metrics.ts';

/** What one scrape reads; every gauge's collect() shares it. */
interface Snapshot {
  active: ActivePlan | undefined;
  benchmark: BenchmarkResult | undefined;
  planChanges: number;
  /** The advice for the database workload from the latest benchmark (as the fleet status asks it). */
  advice: Recommendation | undefined;
  /** The read-back of the last switch to the plan in force. */
  effective: Effective | undefined;
}

/** The advice is recomputed at most this often while the plan and the latest benchmark stay the same. */
const ADVICE_TTL_MS = 60_000;

const desiredStatuses: readonly DesiredSummary['status'][] = [
  'in-desired-state',
  'drift',
  'held',
  'policy-managed',
  'unknown-plan',
];

/** HTTP methods kept as label values; anything else is `other`, so a client cannot add series. */
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** The matched route pattern (`/v1/benchmarks/:id`), never the raw path; `unmatched` for 404s. */
const routeLabel = (c: Context): string => {
  const pattern = routePath(c, -1);
  return pattern === '' || pattern === '*' || pattern === '/*' ? 'unmatched' : pattern;
};

/**
 * prom-client's default set has three gauges named like counters (`nodejs_active_handles_total`,
 * `..._requests_total`, `..._resources_total`), which `promtool check metrics` rejects; the same
 * figures stay, per type, in `nodejs_active_handles`, `nodejs_active_requests` and
 * `nodejs_active_resources`.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];
const dropMisnamedDefaults = (registry: Registry) => {
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
};

export interface Metrics {
  registry: Registry;
  /** Counts and times every request; install it before auth so refused requests count too. */
  middleware: MiddlewareHandler;
  /** GET /metrics: the read scope, like the read operations. */
  handler: (c: Context) => Promise<Response>;
  /** The process metrics, with the event-loop delay monitor that runs only while scraped. */
  process: ProcessMetrics;
}

export const createMetrics = (deps: Deps): Metrics => {
  const registry = new Registry();
  const processMetrics = registerProcessMetrics(registry);
  deps.shutdown.signal.addEventListener('abort', () => processMetrics.stop(), { once: true });
  dropMisnamedDefaults(registry);

  const audit = new AuditChangeCounter(deps.store.audit.files());
  let scrape: Promise<Snapshot> = Promise.resolve({
    active: undefined,
    benchmark: undefined,
    planChanges: 0,
    advice: undefined,
    effective: undefined,
  });

  // The advice reads plans, facts and stored benchmarks: once per plan and benchmark, not per scrape.
  let advice: { key: string; at: number; value: Promise<Recommendation | undefined> } | undefined;
  const adviceFor = (active: ActivePlan, benchmark: BenchmarkResult | undefined) => {
    const key = `${active.plan?.id ?? ''}\n${benchmark?.id ?? ''}`;
    if (!advice || advice.key !== key || Date.now() - advice.at > ADVICE_TTL_MS) {
      const value = advise(
        { backend: deps.backend, bench: deps.bench },
        { workload: 'database', benchmark: 'latest' },
      ).catch((e) => {
        deps.log.warn('metrics: the recommendation failed', { error: errorMessage(e) });
        advice = undefined;
        return undefined;
      });
      advice = { key, at: Date.now(), value };
    }
    return advice.value;
  };

  const read = async (): Promise<Snapshot> => {
    // A failing read leaves its gauges empty (and powerplan_backend_up at 0) instead of failing the scrape.
    const [active, benchmark, planChanges] = await Promise.all([
      // As get_active_power_plan answers it: desired state, the last switch's read-back, who controls.
      activePlan(deps).catch((e) => {
        deps.log.warn('metrics: reading the active plan failed', { error: errorMessage(e) });
        return undefined;
      }),
      deps.bench.latest().catch((e) => {
        deps.log.warn('metrics: reading the benchmark history failed', { error: errorMessage(e) });
        return undefined;
      }),
      audit.total().catch((e) => {
        deps.log.warn('metrics: reading the audit log failed', { error: errorMessage(e) });
        return 0;
      }),
    ]);
    return {
      active,
      benchmark,
      planChanges,
      advice: active ? await adviceFor(active, benchmark) : undefined,
      effective: active?.plan ? await deps.planChange.lastEffective(active.plan.id) : undefined,
    };
  };

  /** Sets an ac/dc setting given in % as a 0..1 ratio; absent values leave no sample. */
  const setAcDc = (gauge: Gauge<'power'>, value: AcDc | null | undefined) => {
    if (value?.ac != null) gauge.set({ power: 'ac' }, value.ac / 100);
    if (value?.dc != null) gauge.set({ power: 'dc' }, value.dc / 100);
  };

  /** A gauge recomputed from the scrape's snapshot each time it is collected. */
  const snapshotGauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (gauge: Gauge<L>, s: Snapshot) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const s = await scrape;
        this.reset();
        // prom-client gives a label-less gauge a 0 on reset: a fact this scrape lacks has no sample.
        if (labelNames.length === 0) this.remove();
        fill(this, s);
      },
    });

  snapshotGauge(
    'powerplan_backend_up',
    '1 when the power backend answered this scrape, else 0.',
    [],
    (g, s) => g.set(s.active ? 1 : 0),
  );
  snapshotGauge(
    'powerplan_active_plan_info',
    'The power plan in force (always 1; the plan is in the labels; edited: a built-in plan whose key settings differ from stock).',
    ['id', 'name', 'kind', 'backend', 'owner', 'edited'],
    (g, s) => {
      const plan = s.active?.plan;
      if (plan && s.active)
        g.set(
          {
            id: plan.id,
            name: plan.name,
            kind: plan.kind,
            backend: deps.backend.name,
            owner: s.active.owner,
            edited: plan.edited ? 'true' : 'false',
          },
          1,
        );
    },
  );
  snapshotGauge(
    'powerplan_plan_settings_not_in_force',
    'Settings that did not take effect at the last switch to the plan in force (0: all in force); no sample when not checked.',
    [],
    (g, s) => {
      if (s.effective?.checked) g.set(s.effective.mismatches.length);
    },
  );
  snapshotGauge(
    'powerplan_processor_control_info',
    'Who decides the processor clock and idle states here (always 1; os, firmware, hypervisor or unknown in the label).',
    ['decided_by'],
    (g, s) => {
      if (s.active?.control) g.set({ decided_by: s.active.control.decidedBy }, 1);
    },
  );
  snapshotGauge(
    'powerplan_idle_state_exit_latency_seconds',
    'Published exit latency of each idle state (C-state): what a request waits when a core sleeps in it.',
    ['state', 'disabled'],
    (g, s) => {
      for (const st of s.active?.idle?.states ?? [])
        if (st.exitLatencyUs !== null)
          g.set({ state: st.name, disabled: st.disabled ? 'true' : 'false' }, st.exitLatencyUs / 1e6);
    },
  );
  snapshotGauge(
    'powerplan_idle_state_time_ratio',
    'Share of all idle time spent in each idle state since boot (0..1).',
    ['state'],
    (g, s) => {
      for (const st of s.active?.idle?.states ?? [])
        if (st.timeShare !== null) g.set({ state: st.name }, st.timeShare);
    },
  );
  snapshotGauge(
    'powerplan_idle_deepest_exit_latency_seconds',
    'Exit latency of the deepest idle state neither disabled nor forbidden by PM QoS: the wake-up cost a plan allows.',
    [],
    (g, s) => {
      const d = s.active?.idle?.deepestEnabled;
      if (d?.exitLatencyUs != null) g.set(d.exitLatencyUs / 1e6);
    },
  );
  snapshotGauge(
    'powerplan_benchmark_wakeup_seconds',
    'Latest benchmark: what a request pays after an idle gap (timer overshoot plus first-unit slowdown), p50 and p99.',
    ['gap_seconds', 'percentile'],
    (g, s) => {
      for (const gap of s.benchmark?.phases.wakeUp?.gaps ?? []) {
        g.set({ gap_seconds: String(gap.gapUs / 1e6), percentile: '50' }, gap.costUs.p50 / 1e6);
        g.set({ gap_seconds: String(gap.gapUs / 1e6), percentile: '99' }, gap.costUs.p99 / 1e6);
      }
    },
  );
  snapshotGauge(
    'powerplan_processor_min_state_ratio',
    'Minimum processor state of the active plan (0..1; Windows PROCTHROTTLEMIN) on mains (ac) or battery (dc).',
    ['power'],
    (g, s) => setAcDc(g, s.active?.processor.minStatePercent),
  );
  snapshotGauge(
    'powerplan_processor_max_state_ratio',
    'Maximum processor state of the active plan (0..1; Windows PROCTHROTTLEMAX) on mains (ac) or battery (dc).',
    ['power'],
    (g, s) => setAcDc(g, s.active?.processor.maxStatePercent),
  );
  snapshotGauge(
    'powerplan_processor_epp_ratio',
    'Energy performance preference of the active plan (0 = performance .. 1 = energy; Windows PERFEPP).',
    ['power'],
    (g, s) => setAcDc(g, s.active?.processor.epp),
  );
  snapshotGauge(
    'powerplan_governor_info',
    'cpufreq scaling governor and driver (Linux; always 1, the values are in the labels).',
    ['governor', 'driver'],
    (g, s) => {
      const p = s.active?.processor;
      if (p && (p.governor !== null || p.driver !== null))
        g.set({ governor: p.governor ?? '', driver: p.driver ?? '' }, 1);
    },
  );
  snapshotGauge(
    'powerplan_policy_managed',
    '1 when a policy (e.g. Windows group policy) sets the plan and will revert a change, else 0.',
    [],
    (g, s) => {
      if (s.active) g.set(s.active.policyManaged ? 1 : 0);
    },
  );
  snapshotGauge(
    'powerplan_plan_settable',
    '1 when this service can change the plan here (rights, platform), else 0.',
    [],
    (g, s) => {
      if (s.active) g.set(s.active.canSet ? 1 : 0);
    },
  );
  snapshotGauge(
    'powerplan_desired_plan_status',
    'The desired plan compared with the plan in force: 1 for the current status, 0 for the others; no sample without a desired plan.',
    ['status'],
    (g, s) => {
      const status = s.active?.desired?.status;
      if (status) for (const x of desiredStatuses) g.set({ status: x }, x === status ? 1 : 0);
    },
  );
  snapshotGauge(
    'powerplan_plan_change_recommended',
    '1 when the advice for the database workload (latest benchmark under the plan in force, else the rules) is to switch plans, else 0.',
    [],
    (g, s) => {
      if (s.advice) g.set(s.advice.changeRecommended ? 1 : 0);
    },
  );
  snapshotGauge(
    'powerplan_recommended_plan_info',
    'The plan the advice for the database workload recommends being in (always 1; the plan is in the labels; the plan in force when nothing should change).',
    ['id', 'name', 'kind'],
    (g, s) => {
      const r = s.advice?.recommended;
      if (r) g.set({ id: r.id, name: r.name, kind: r.kind }, 1);
    },
  );
  snapshotGauge(
    'powerplan_benchmark_burst_penalty_ratio',
    'Latest benchmark: how much slower a burst ran after an idle gap than on a warm core (median; 0 = as fast, 0.3 = 30% slower).',
    ['gap_seconds'],
    (g, s) => {
      for (const gap of s.benchmark?.phases.burstsAfterIdle ?? [])
        g.set({ gap_seconds: String(gap.idleGapMs / 1000) }, gap.penaltyPercent.value / 100);
    },
  );
  snapshotGauge(
    'powerplan_benchmark_throughput_operations_per_second',
    'Latest benchmark: sustained kernel operations per second on one thread (single_thread) and on all threads together (all_core).',
    ['phase'],
    (g, s) => {
      const phases = s.benchmark?.phases;
      if (!phases) return;
      g.set({ phase: 'single_thread' }, phases.sustainedSingle.throughput.value * 1e6);
      g.set({ phase: 'all_core' }, phases.sustainedAllCore.throughput.value * 1e6);
    },
  );
  snapshotGauge(
    'powerplan_benchmark_last_run_timestamp_seconds',
    'Latest benchmark: when it finished (Unix time) and its profile, to tell a fresh measurement from an old one.',
    ['profile'],
    (g, s) => {
      // Labelled so that no benchmark means no sample: a label-less gauge would report 0 (1970).
      if (s.benchmark) g.set({ profile: s.benchmark.profile }, Date.parse(s.benchmark.finishedAt) / 1000);
    },
  );
  new Counter({
    name: 'powerplan_plan_changes_total',
    help: 'Changes of the active plan recorded in the audit log (by any caller, including the CLI and restores).',
    registers: [registry],
    async collect() {
      const { planChanges } = await scrape;
      this.reset();
      this.inc(planChanges);
    },
  });

  // Desired state and holds (docs/HOLDS.md): the drift counters are the checker's of this process.
  new Counter({
    name: 'powerplan_drift_total',
    help: 'Drifts from the desired plan detected since the service started (each drift counted once).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(deps.desired.driftTotal);
    },
  });
  new Gauge({
    name: 'powerplan_in_desired_state',
    help: '1 when the desired plan (label) was in force at the last check, 0 when not; no sample without a desired plan.',
    labelNames: ['plan'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const { inDesiredState, planId } = deps.desired;
      if (inDesiredState !== null && planId !== null) this.set({ plan: planId }, inDesiredState ? 1 : 0);
    },
  });
  const holds = () =>
    deps.holds.snapshot().catch((e: unknown) => {
      deps.log.warn('metrics: reading the hold journal failed', { error: errorMessage(e) });
      return undefined;
    });
  new Gauge({
    name: 'powerplan_holds_active',
    help: 'Holds in force (hold_power_plan).',
    registers: [registry],
    async collect() {
      this.reset();
      const h = await holds();
      if (h) this.set(h.active);
    },
  });
  new Gauge({
    name: 'powerplan_hold_expiry_seconds',
    help: 'Seconds until the next hold ends (next) and until the last one ends and the plan is restored (restore); no sample without holds.',
    labelNames: ['hold'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const h = await holds();
      if (h?.secondsUntilExpiry != null) this.set({ hold: 'next' }, h.secondsUntilExpiry);
      if (h?.secondsUntilRestore != null) this.set({ hold: 'restore' }, h.secondsUntilRestore);
    },
  });

  // Damaged state files (kept aside as <name>.corrupt-<time>): those present, by any process.
  new Gauge({
    name: 'powerplan_state_files_damaged',
    help: 'Damaged state files kept aside (<name>.corrupt-<time>) in the state directory, by file; remove a kept copy once dealt with.',
    labelNames: ['file'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const d of deps.store.damaged()) this.inc({ file: d.file });
    },
  });
  new Counter({
    name: 'powerplan_state_files_kept_aside_total',
    help: 'Damaged state files this process has moved aside since it started.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(deps.store.keptAsideTotal);
    },
  });

  const requests = new Counter({
    name: 'powerplan_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'powerplan_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  const middleware: MiddlewareHandler = async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const method = knownMethods.has(c.req.method) ? c.req.method : 'other';
      const route = routeLabel(c);
      requests.inc({ method, route, status: String(c.res.status) });
      duration.observe({ method, route }, (performance.now() - started) / 1000);
    }
  };

  const handler = async (c: Context): Promise<Response> => {
    const caller = c.get('caller') as Caller;
    requireScope(caller, 'read', 'GET /metrics');
    scrape = read();
    processMetrics.scraped();
    const body = await registry.metrics();
    return c.body(body, 200, { 'content-type': registry.contentType });
  };

  return { registry, middleware, handler, process: processMetrics };
};
