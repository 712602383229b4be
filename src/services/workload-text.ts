/**
 * The workload cost in words: the one-sentence summary every surface shows ("at this server's
 * load over the last N s the plan adds ~X% (Y-Z%)") and the CLI's longer rendering.
 */
import type { EstimateOutcome } from '../advice/workload-cost.ts';
import { formatCpuList } from '../domain/cpu-list.ts';
import type { WorkloadCost, WorkloadObservation } from '../domain/workload.ts';

const seconds = (s: number): string => (s >= 120 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`);

/** The CPUs observed, where some were asked for: "CPU 0", "CPUs 0-3,8". */
const cpusAsked = (o: WorkloadObservation): string | null =>
  o.cpuSet === undefined ? null : `CPU${o.cpus === 1 ? '' : 's'} ${o.cpuSet}`;

const over = (o: WorkloadObservation): string => {
  const on = cpusAsked(o);
  return (
    (on ? `on ${on} ` : '') +
    (o.since === 'boot'
      ? `since boot (${seconds(o.windowSeconds)})`
      : `over the last ${seconds(o.windowSeconds)}`)
  );
};

export const workloadSummary = (
  o: WorkloadObservation,
  outcome: EstimateOutcome,
  plan: string | null,
): string => {
  if (!outcome.estimate) return `${over(o)}: ${outcome.reason}`;
  const e = outcome.estimate;
  const basis =
    e.basis === 'benchmark'
      ? `costs measured by benchmark ${e.benchmarkId}`
      : 'published exit latencies only, no benchmark under this plan';
  const recover =
    e.recoverablePercent !== undefined ? `; a performance plan would recover ~${e.recoverablePercent}%` : '';
  const platform = e.platformPercent
    ? ` (beside ~${e.platformPercent}% the platform loses under any plan)`
    : '';
  return `at this server's load ${over(o)} the plan${plan ? ` ${plan}` : ''} adds ~${e.addedPercent}% (${e.low}-${e.high}%) to its CPU work${platform}${recover} (${basis})`;
};

const n = (x: number | null, unit = ''): string => (x === null ? '-' : `${x}${unit}`);

/** Where the listed CPUs' bursts were counted in 1 ms units (pieces of longer busy periods), which. */
const inUnits = (o: WorkloadObservation): string => {
  const cpus = o.perCpu.filter((c) => c.workInUnits).map((c) => c.cpu);
  return cpus.length ? ` (in 1 ms units on CPU ${formatCpuList(cpus)})` : '';
};

export const formatWorkloadCost = (w: WorkloadCost): string => {
  const o = w.observation;
  const lines = [
    w.summary,
    '',
    `observed: ${cpusAsked(o) ?? `${o.cpus} CPU(s)`}, ${o.source}, busy ${o.busyShare === null ? '-' : `${Math.round(o.busyShare * 1000) / 10}%`}, ` +
      `${n(o.idleEntriesPerSecond)} idle entries/s, mean idle ${n(o.meanIdlePeriodUs, ' us')}, mean busy ${n(o.meanBusyPeriodUs, ' us')}` +
      (o.workBurstsPerSecond != null ? `, ${o.workBurstsPerSecond} bursts of work/s${inUnits(o)}` : ''),
    ...o.states.map(
      (s) =>
        `  ${s.name}: ${Math.round(s.share * 1000) / 10}% of idle, ${s.entriesPerSecond}/s, mean ${n(s.meanPeriodUs, ' us')}, exit latency ${n(s.exitLatencyUs, ' us')}` +
        (s.above !== null || s.below !== null ? `, above ${n(s.above)}, below ${n(s.below)}` : ''),
    ),
  ];
  const e = w.estimate;
  if (e)
    lines.push(
      `estimate: +${e.addedPercent}% (${e.low}-${e.high}%): wake-up ${e.wakeUpPercent}%, clock ramp ${e.rampPercent}%, ${e.addedUsPerWakeup} us per wake-up (${e.basis})` +
        (e.platformPercent !== undefined ? `; the platform's own ramp ${e.platformPercent}%, left out` : ''),
    );
  return lines.join('\n');
};
