/**
 * The workload's idle counters and the plan's estimated cost as Prometheus metrics: the raw
 * counters as counters (`..._total`, summed over CPUs, by idle state), so Prometheus takes the
 * rates itself over any range, and the estimate of the scrape's read (deltas against the previous
 * status read) as gauges. Labels are bounded: an idle state's name (a handful per driver), never
 * a CPU.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { IdleSnapshot, WorkloadCost } from '../../domain/workload.ts';
import type { Status } from '../../services/status.ts';

/** The state names of a snapshot with their totals over CPUs. */
const byState = (
  snap: IdleSnapshot,
  pick: (s: IdleSnapshot['cpus'][number]['states'][number]) => number | null,
) => {
  const out = new Map<string, number>();
  for (const c of snap.cpus)
    for (const s of c.states) {
      const v = pick(s);
      if (v !== null) out.set(s.name, (out.get(s.name) ?? 0) + v);
    }
  return out;
};

const total = (
  snap: IdleSnapshot,
  pick: (c: IdleSnapshot['cpus'][number]) => number | null,
): number | null => {
  const xs = snap.cpus.map(pick).filter((x): x is number => x !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) : null;
};

/** Idle entries of one CPU: what its states counted, or its wake-ups where no state counts. */
const entriesOf = (c: IdleSnapshot['cpus'][number]): number | null =>
  c.states.length ? c.states.reduce((n, s) => n + s.usage, 0) : c.wakeups;

export const registerWorkloadMetrics = (registry: Registry, current: () => Promise<Status>): void => {
  const counters = async () => {
    const w = (await current()).workload;
    return w?.ok ? w.value.counters : undefined;
  };
  const cost = async (): Promise<WorkloadCost | undefined> => {
    const w = (await current()).workload;
    return w?.ok ? w.value.cost : undefined;
  };
  const stateCounter = (name: string, help: string, pick: Parameters<typeof byState>[1], scale = 1) =>
    new Counter({
      name,
      help,
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        const snap = await counters();
        this.reset();
        if (snap) for (const [state, v] of byState(snap, pick)) this.inc({ state }, v * scale);
      },
    });
  const plainCounter = (name: string, help: string, pick: (s: IdleSnapshot) => number | null) =>
    new Counter({
      name,
      help,
      registers: [registry],
      async collect() {
        const snap = await counters();
        this.reset();
        this.remove();
        const v = snap ? pick(snap) : null;
        if (v !== null) this.inc(v);
      },
    });
  stateCounter(
    'powerplan_idle_state_entries_total',
    'Entries into each idle state, summed over CPUs (cpuidle usage; Windows Cn transitions).',
    (s) => s.usage,
  );
  stateCounter(
    'powerplan_idle_state_seconds_total',
    'Time spent in each idle state, summed over CPUs.',
    (s) => s.timeUs,
    1e-6,
  );
  stateCounter(
    'powerplan_idle_state_above_total',
    'Entries into each idle state that proved too deep (cpuidle above), summed over CPUs.',
    (s) => s.above,
  );
  stateCounter(
    'powerplan_idle_state_below_total',
    'Entries into each idle state that proved too shallow (cpuidle below), summed over CPUs.',
    (s) => s.below,
  );
  plainCounter(
    'powerplan_idle_entries_total',
    "Idle entries (wake-ups) over all CPUs: the idle states' entries, or the interrupts taken where no state counts them.",
    (s) => total(s, entriesOf),
  );
  plainCounter(
    'powerplan_cpu_busy_seconds_total',
    'CPU time spent busy, summed over CPUs (all but idle and iowait).',
    (s) => {
      const v = total(s, (c) => c.busyUs);
      return v === null ? null : v * 1e-6;
    },
  );
  plainCounter(
    'powerplan_cpu_accounted_seconds_total',
    'All CPU time accounted, summed over CPUs (busy, idle, iowait, steal).',
    (s) => {
      const v = total(s, (c) => c.totalUs);
      return v === null ? null : v * 1e-6;
    },
  );

  const gauge = (name: string, help: string, pick: (c: WorkloadCost) => number | null | undefined) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const c = await cost();
        this.reset();
        this.remove();
        const v = c ? pick(c) : undefined;
        if (v !== null && v !== undefined) this.set(v);
      },
    });
  const ratio = (n: number | undefined) => (n === undefined ? undefined : n / 100);
  gauge(
    'powerplan_workload_window_seconds',
    'Seconds the latest workload estimate observed (since the previous scrape).',
    (c) => c.observation.windowSeconds,
  );
  gauge(
    'powerplan_workload_estimated',
    '1 when the workload estimate has a number, 0 when it has a reason instead (e.g. too little work).',
    (c) => (c.estimate ? 1 : 0),
  );
  gauge(
    'powerplan_workload_added_ratio',
    'By how much the plan in force lengthens the CPU work observed (0.05 = 5%).',
    (c) => ratio(c.estimate?.addedPercent),
  );
  gauge(
    'powerplan_workload_added_low_ratio',
    'Low end of the range of powerplan_workload_added_ratio.',
    (c) => ratio(c.estimate?.low),
  );
  gauge(
    'powerplan_workload_added_high_ratio',
    'High end of the range of powerplan_workload_added_ratio.',
    (c) => ratio(c.estimate?.high),
  );
  gauge(
    'powerplan_workload_recoverable_ratio',
    'Share of the observed work a performance plan would recover, from a benchmark under one.',
    (c) => ratio(c.estimate?.recoverablePercent),
  );
  gauge(
    'powerplan_workload_platform_ratio',
    "Share of the observed work the clock takes under a performance plan too (the platform's), left out of powerplan_workload_added_ratio; from a benchmark under a performance plan.",
    (c) => ratio(c.estimate?.platformPercent),
  );
  gauge(
    'powerplan_workload_added_seconds_per_wakeup',
    'Added time per wake-up (s): the wake-up cost plus the clock ramp it sets off.',
    (c) => (c.estimate ? c.estimate.addedUsPerWakeup * 1e-6 : undefined),
  );
};
