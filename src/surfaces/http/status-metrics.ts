/**
 * The status read model (services/status.ts) as Prometheus metrics: the plan in force and its
 * processor settings, idle states, the latest benchmark, the advice, plan changes from the audit
 * log, the desired state, holds and damaged state files. Every series is drawn from the one read
 * of the scrape in progress; a part that could not be read leaves its series without samples.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AcDc, DesiredSummary } from '../../domain/schemas.ts';
import type { Status } from '../../services/status.ts';

const desiredStatuses: readonly DesiredSummary['status'][] = [
  'in-desired-state',
  'drift',
  'held',
  'policy-managed',
  'unknown-plan',
];

/** Sets an ac/dc setting given in % as a 0..1 ratio; absent values leave no sample. */
const setAcDc = (gauge: Gauge<'power'>, value: AcDc | null | undefined) => {
  if (value?.ac != null) gauge.set({ power: 'ac' }, value.ac / 100);
  if (value?.dc != null) gauge.set({ power: 'dc' }, value.dc / 100);
};

const active = (s: Status) => s.active.value;

/** Registers the status series on `registry`; `current` answers the read of the scrape in progress. */
export const registerStatusMetrics = (registry: Registry, current: () => Promise<Status>): void => {
  /** A gauge recomputed from the scrape's status each time it is collected. */
  const statusGauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (gauge: Gauge<L>, s: Status) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const s = await current();
        this.reset();
        // prom-client gives a label-less gauge a 0 on reset: a fact this scrape lacks has no sample.
        if (labelNames.length === 0) this.remove();
        fill(this, s);
      },
    });
  /** 1 or 0 for a yes/no fact of the scrape's status; no sample while it is unknown. */
  const flagGauge = (name: string, help: string, pick: (s: Status) => boolean | undefined) =>
    statusGauge(name, help, [], (g, s) => {
      const flag = pick(s);
      if (flag !== undefined) g.set(flag ? 1 : 0);
    });
  /** A counter whose total is the scrape's status. */
  const statusCounter = (name: string, help: string, total: (s: Status) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      async collect() {
        const s = await current();
        this.reset();
        this.inc(total(s));
      },
    });

  flagGauge(
    'powerplan_backend_up',
    '1 when the power backend answered this scrape, else 0.',
    (s) => s.active.ok,
  );
  statusGauge(
    'powerplan_active_plan_info',
    'The power plan in force (always 1; the plan is in the labels; edited: a built-in plan whose key settings differ from stock).',
    ['id', 'name', 'kind', 'backend', 'owner', 'edited'],
    (g, s) => {
      const a = active(s);
      if (a?.plan)
        g.set(
          {
            id: a.plan.id,
            name: a.plan.name,
            kind: a.plan.kind,
            backend: s.backend,
            owner: a.owner,
            edited: a.plan.edited ? 'true' : 'false',
          },
          1,
        );
    },
  );
  statusGauge(
    'powerplan_plan_settings_not_in_force',
    'Settings that did not take effect at the last switch to the plan in force (0: all in force); no sample when not checked.',
    [],
    (g, s) => {
      const effective = active(s)?.effective;
      if (effective?.checked) g.set(effective.mismatches.length);
    },
  );
  statusGauge(
    'powerplan_processor_control_info',
    'Who decides the processor clock and idle states here (always 1; os, firmware, hypervisor or unknown in the label).',
    ['decided_by'],
    (g, s) => {
      const control = active(s)?.control;
      if (control) g.set({ decided_by: control.decidedBy }, 1);
    },
  );
  statusGauge(
    'powerplan_idle_state_exit_latency_seconds',
    'Published exit latency of each idle state (C-state): what a request waits when a core sleeps in it.',
    ['state', 'disabled'],
    (g, s) => {
      for (const st of active(s)?.idle?.states ?? [])
        if (st.exitLatencyUs !== null)
          g.set({ state: st.name, disabled: st.disabled ? 'true' : 'false' }, st.exitLatencyUs / 1e6);
    },
  );
  statusGauge(
    'powerplan_idle_state_time_ratio',
    'Share of all idle time spent in each idle state since boot (0..1).',
    ['state'],
    (g, s) => {
      for (const st of active(s)?.idle?.states ?? [])
        if (st.timeShare !== null) g.set({ state: st.name }, st.timeShare);
    },
  );
  statusGauge(
    'powerplan_idle_deepest_exit_latency_seconds',
    'Exit latency of the deepest idle state neither disabled nor forbidden by PM QoS: the wake-up cost a plan allows.',
    [],
    (g, s) => {
      const d = active(s)?.idle?.deepestEnabled;
      if (d?.exitLatencyUs != null) g.set(d.exitLatencyUs / 1e6);
    },
  );
  statusGauge(
    'powerplan_benchmark_wakeup_seconds',
    'Latest benchmark: what a request pays after an idle gap (timer overshoot plus first-unit slowdown), p50 and p99.',
    ['gap_seconds', 'percentile'],
    (g, s) => {
      for (const gap of s.benchmark.value?.phases.wakeUp?.gaps ?? []) {
        g.set({ gap_seconds: String(gap.gapUs / 1e6), percentile: '50' }, gap.costUs.p50 / 1e6);
        g.set({ gap_seconds: String(gap.gapUs / 1e6), percentile: '99' }, gap.costUs.p99 / 1e6);
      }
    },
  );
  const processorRatio = (
    name: string,
    help: string,
    pick: (p: NonNullable<ReturnType<typeof active>>['processor']) => AcDc | null | undefined,
  ) =>
    statusGauge(name, help, ['power'], (g, s) => {
      const p = active(s)?.processor;
      if (p) setAcDc(g, pick(p));
    });
  processorRatio(
    'powerplan_processor_min_state_ratio',
    'Minimum processor state of the active plan (0..1; Windows PROCTHROTTLEMIN) on mains (ac) or battery (dc).',
    (p) => p.minStatePercent,
  );
  processorRatio(
    'powerplan_processor_max_state_ratio',
    'Maximum processor state of the active plan (0..1; Windows PROCTHROTTLEMAX) on mains (ac) or battery (dc).',
    (p) => p.maxStatePercent,
  );
  processorRatio(
    'powerplan_processor_epp_ratio',
    'Energy performance preference of the active plan (0 = performance .. 1 = energy; Windows PERFEPP).',
    (p) => p.epp,
  );
  statusGauge(
    'powerplan_governor_info',
    'cpufreq scaling governor and driver (Linux; always 1, the values are in the labels).',
    ['governor', 'driver'],
    (g, s) => {
      const p = active(s)?.processor;
      if (p && (p.governor !== null || p.driver !== null))
        g.set({ governor: p.governor ?? '', driver: p.driver ?? '' }, 1);
    },
  );
  flagGauge(
    'powerplan_policy_managed',
    '1 when a policy (e.g. Windows group policy) sets the plan and will revert a change, else 0.',
    (s) => active(s)?.policyManaged,
  );
  flagGauge(
    'powerplan_plan_settable',
    '1 when this service can change the plan here (rights, platform), else 0.',
    (s) => active(s)?.canSet,
  );
  statusGauge(
    'powerplan_desired_plan_status',
    'The desired plan compared with the plan in force: 1 for the current status, 0 for the others; no sample without a desired plan.',
    ['status'],
    (g, s) => {
      const status = active(s)?.desired?.status;
      if (status) for (const x of desiredStatuses) g.set({ status: x }, x === status ? 1 : 0);
    },
  );
  flagGauge(
    'powerplan_plan_change_recommended',
    '1 when the advice for the database workload (latest benchmark under the plan in force, else the rules) is to switch plans, else 0.',
    (s) => s.advice.value?.changeRecommended,
  );
  statusGauge(
    'powerplan_recommended_plan_info',
    'The plan the advice for the database workload recommends being in (always 1; the plan is in the labels; the plan in force when nothing should change).',
    ['id', 'name', 'kind'],
    (g, s) => {
      const r = s.advice.value?.recommended;
      if (r) g.set({ id: r.id, name: r.name, kind: r.kind }, 1);
    },
  );
  statusGauge(
    'powerplan_benchmark_burst_penalty_ratio',
    'Latest benchmark: how much slower a burst ran after an idle gap than on a warm core (median; 0 = as fast, 0.3 = 30% slower).',
    ['gap_seconds'],
    (g, s) => {
      for (const gap of s.benchmark.value?.phases.burstsAfterIdle ?? [])
        g.set({ gap_seconds: String(gap.idleGapMs / 1000) }, gap.penaltyPercent.value / 100);
    },
  );
  statusGauge(
    'powerplan_benchmark_throughput_operations_per_second',
    'Latest benchmark: sustained kernel operations per second on one thread (single_thread) and on all threads together (all_core).',
    ['phase'],
    (g, s) => {
      const phases = s.benchmark.value?.phases;
      if (!phases) return;
      g.set({ phase: 'single_thread' }, phases.sustainedSingle.throughput.value * 1e6);
      g.set({ phase: 'all_core' }, phases.sustainedAllCore.throughput.value * 1e6);
    },
  );
  statusGauge(
    'powerplan_benchmark_last_run_timestamp_seconds',
    'Latest benchmark: when it finished (Unix time) and its profile, to tell a fresh measurement from an old one.',
    ['profile'],
    (g, s) => {
      // Labelled so that no benchmark means no sample: a label-less gauge would report 0 (1970).
      const b = s.benchmark.value;
      if (b) g.set({ profile: b.profile }, Date.parse(b.finishedAt) / 1000);
    },
  );
  statusCounter(
    'powerplan_plan_changes_total',
    'Changes of the active plan recorded in the audit log (by any caller, including the CLI and restores).',
    (s) => s.planChanges.value ?? 0,
  );
  statusCounter(
    'powerplan_plan_changes_refused_total',
    'Attempts to change a plan refused by this process (invalid input, scope, conflict, lock busy, unknown plan); each is audited, beyond the cap summed up.',
    (s) => s.refusedChanges,
  );

  // Desired state and holds (docs/HOLDS.md): the drift counters are the checker's of this process.
  statusCounter(
    'powerplan_drift_total',
    'Drifts from the desired plan detected since the service started (each drift counted once).',
    (s) => s.desired.driftTotal,
  );
  statusGauge(
    'powerplan_in_desired_state',
    '1 when the desired plan (label) was in force at the last check, 0 when not; no sample without a desired plan.',
    ['plan'],
    (g, { desired }) => {
      if (desired.inDesiredState !== null && desired.planId !== null)
        g.set({ plan: desired.planId }, desired.inDesiredState ? 1 : 0);
    },
  );
  statusGauge('powerplan_holds_active', 'Holds in force (hold_power_plan).', [], (g, s) => {
    if (s.holds.value) g.set(s.holds.value.active);
  });
  statusGauge(
    'powerplan_hold_expiry_seconds',
    'Seconds until the next hold ends (next) and until the last one ends and the plan is restored (restore); no sample without holds.',
    ['hold'],
    (g, { holds: { value: h } }) => {
      if (h?.secondsUntilExpiry != null) g.set({ hold: 'next' }, h.secondsUntilExpiry);
      if (h?.secondsUntilRestore != null) g.set({ hold: 'restore' }, h.secondsUntilRestore);
    },
  );

  // Damaged state files (kept aside as <name>.corrupt-<time>): those present, by any process.
  statusGauge(
    'powerplan_state_files_damaged',
    'Damaged state files kept aside (<name>.corrupt-<time>) in the state directory, by file; remove a kept copy once dealt with.',
    ['file'],
    (g, s) => {
      for (const d of s.damaged) g.inc({ file: d.file });
    },
  );
  statusCounter(
    'powerplan_state_files_kept_aside_total',
    'Damaged state files this process has moved aside since it started.',
    (s) => s.keptAsideTotal,
  );
};
