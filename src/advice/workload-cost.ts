/**
 * The workload cost model: what the plan in force adds to the CPU work observed, from the idle
 * pattern (entries and mean idle period per state, mean busy period between wake-ups) and the
 * plan's costs (per idle gap: the wake-up cost, and the time a burst loses while the clock ramps
 * up). A model of a clock and of idle states, after PowerNap (Meisner et al., ASPLOS'09) and
 * Meisner et al. (ISCA'11): each wake-up pays the wake cost of the gap before it, and the work
 * that follows runs slowed until the clock is up again. Pure functions; docs/ADVICE.md has the
 * model, its assumptions and where it is wrong.
 */
import { TOO_LITTLE_WORK, type WorkloadEstimate, type WorkloadObservation } from '../domain/workload.ts';

/** A cost with its range, in us. */
export interface Range {
  mid: number;
  low: number;
  high: number;
}

/** The wake-up cost measured after one idle gap, above the cost after the shortest gap. */
export interface WakePoint {
  gapUs: number;
  costUs: Range;
}

/**
 * The clock ramp after one idle gap: the time a burst loses in all, how long the ramp lasts, and
 * how much slower its first unit of work (`unitUs` long) runs, where a ramp is steepest.
 */
export interface RampPoint {
  gapUs: number;
  lossUs: Range;
  rampUs: number;
  /** First unit's time over warm, minus 1 (0 = not slowed). */
  startSlowdown: Range;
  unitUs: number;
}

export interface PlanCosts {
  basis: WorkloadEstimate['basis'];
  benchmarkId?: string;
  /** Shortest gap first; empty: the wake-up half is taken from the states' exit latencies. */
  wake: WakePoint[];
  /** Shortest gap first; empty: no clock ramp known. */
  ramp: RampPoint[];
}

/** Below this much work in the window the counters' noise outweighs the work: no estimate. */
export const MIN_BUSY_SHARE = 0.005;
export const MIN_BUSY_SECONDS = 0.2;
/** However slow the clock, at least this share of the busy time observed is taken as the work. */
const MIN_WORK_SHARE = 0.1;

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Linear in log(gap) between points; `below` says what happens left of the first point. */
const interpolate = (
  points: readonly { gapUs: number }[],
  value: (i: number) => number,
  gapUs: number,
  below: (first: number, gapUs: number, firstGapUs: number) => number,
): number => {
  if (!points.length) return 0;
  const first = points[0]!;
  if (gapUs <= first.gapUs) return below(value(0), gapUs, first.gapUs);
  for (let i = 1; i < points.length; i++) {
    const b = points[i]!;
    if (gapUs <= b.gapUs) {
      const a = points[i - 1]!;
      const t = (Math.log(gapUs) - Math.log(a.gapUs)) / (Math.log(b.gapUs) - Math.log(a.gapUs));
      return value(i - 1) + t * (value(i) - value(i - 1));
    }
  }
  return value(points.length - 1);
};

type Pick3 = keyof Range;

/** The wake-up cost after a gap: 0 at and below the shortest gap measured (that floor no plan removes). */
export const wakeCostAt = (costs: PlanCosts, gapUs: number, pick: Pick3): number =>
  Math.max(
    0,
    interpolate(
      costs.wake,
      (i) => costs.wake[i]!.costUs[pick],
      gapUs,
      () => 0,
    ),
  );

/**
 * The time a busy period of `busyUs` loses to the clock ramp after a gap: its first unit runs
 * slowed by the first unit's measured slowdown, the rest of the loss is spread over the rest of the
 * ramp, so a busy period as long as the ramp loses it all and a shorter one its share. Below the
 * shortest gap measured the loss shrinks in proportion to the gap (the clock drops gradually);
 * above the longest it stays.
 */
export const rampLossAt = (costs: PlanCosts, gapUs: number, busyUs: number, pick: Pick3): number => {
  const ramp = costs.ramp;
  const scaled = (v: number, g: number, g0: number) => (v * g) / g0;
  const loss = Math.max(
    0,
    interpolate(ramp, (i) => ramp[i]!.lossUs[pick], gapUs, scaled),
  );
  const start = Math.max(
    0,
    interpolate(ramp, (i) => ramp[i]!.startSlowdown[pick], gapUs, scaled),
  );
  const rampUs = interpolate(
    ramp,
    (i) => ramp[i]!.rampUs,
    gapUs,
    (v) => v,
  );
  const unitUs = Math.min(ramp[0]?.unitUs ?? 0, rampUs);
  if (rampUs <= 0) return 0;
  const head = start * Math.min(busyUs, unitUs);
  const rest = Math.max(0, loss - start * unitUs);
  const tail = rampUs > unitUs ? rest * Math.min(1, Math.max(0, busyUs - unitUs) / (rampUs - unitUs)) : 0;
  return head + tail;
};

/** Gaps at the midpoints of K equal-probability slices of an exponential distribution with mean 1. */
const K = 32;
const EXP_QUANTILES = Array.from({ length: K }, (_, k) => -Math.log(1 - (k + 0.5) / K));

/** The idle gaps a mean stands for: exponential (memoryless) or all equal to it. */
const gapsOf = (meanUs: number, shape: 'exponential' | 'mean'): number[] =>
  shape === 'mean' ? [meanUs] : EXP_QUANTILES.map((q) => q * meanUs);

const avg = (gaps: readonly number[], f: (g: number) => number) =>
  gaps.reduce((s, g) => s + f(g), 0) / gaps.length;

/**
 * One CPU's pattern over the window: wake-ups per second, its mean idle period and busy time per
 * second. The clock ramps per core, and a mean over CPUs mixes a busy core's short gaps with an
 * idle core's long ones, so the ramp half is taken CPU by CPU.
 */
interface CpuPattern {
  entriesPerSecond: number;
  meanIdleUs: number;
  busyUsPerSecond: number;
}

/**
 * The CPUs listed one by one, and the rest (beyond the listed busiest) as one more pattern made of
 * what the totals leave; the totals alone when no CPU is listed.
 */
const cpusOf = (o: WorkloadObservation): CpuPattern[] => {
  const window = o.windowSeconds;
  const totalEntries = o.idleEntriesPerSecond ?? 0;
  const totalBusy = ((o.busySeconds ?? 0) * 1e6) / window;
  const listed = o.perCpu.flatMap((c) =>
    c.busyShare !== null && c.idleEntriesPerSecond && c.meanIdlePeriodUs !== null
      ? [
          {
            entriesPerSecond: c.idleEntriesPerSecond,
            meanIdleUs: c.meanIdlePeriodUs,
            busyUsPerSecond: c.busyShare * 1e6,
          },
        ]
      : [],
  );
  if (!listed.length)
    return [
      { entriesPerSecond: totalEntries, meanIdleUs: o.meanIdlePeriodUs ?? 0, busyUsPerSecond: totalBusy },
    ];
  const restCpus = o.cpus - listed.length;
  const restEntries = totalEntries - listed.reduce((n, c) => n + c.entriesPerSecond, 0);
  const restBusy = totalBusy - listed.reduce((n, c) => n + c.busyUsPerSecond, 0);
  if (restCpus > 0 && restEntries > 0 && restBusy >= 0)
    listed.push({
      entriesPerSecond: restEntries,
      meanIdleUs: Math.max(0, restCpus * 1e6 - restBusy) / restEntries,
      busyUsPerSecond: restBusy,
    });
  return listed;
};

/** The states the wake-up half weighs: the observed ones that were entered. */
const statesOf = (o: WorkloadObservation) => o.states.filter((s) => s.entriesPerSecond > 0);

/**
 * A CPU's idle periods in the middle estimate: where the idle states split them (a shallow state
 * taking the short ones, a deep one the long), a mix of one exponential per state, weighed by its
 * entries, its mean that state's mean period scaled so that the mix has the CPU's own mean (the
 * states are counted over all CPUs, so each CPU is taken to split its idle time alike); with one
 * state or none, one exponential. Each entry is a gap and the share of the CPU's wake-ups it stands
 * for. 'mean': every period equal to the CPU's mean, the other extreme of the range.
 */
const idleGapsOf = (
  states: readonly { entriesPerSecond: number; meanPeriodUs: number }[],
  meanUs: number,
  shape: 'exponential' | 'mean',
): { gapUs: number; weight: number }[] => {
  const entries = states.reduce((n, s) => n + s.entriesPerSecond, 0);
  const overall = entries ? states.reduce((t, s) => t + s.entriesPerSecond * s.meanPeriodUs, 0) / entries : 0;
  if (shape === 'mean' || states.length < 2 || overall <= 0)
    return gapsOf(meanUs, shape).map((gapUs, _, all) => ({ gapUs, weight: 1 / all.length }));
  return states.flatMap((s) =>
    gapsOf((s.meanPeriodUs * meanUs) / overall, shape).map((gapUs, _, all) => ({
      gapUs,
      weight: s.entriesPerSecond / entries / all.length,
    })),
  );
};

interface Totals {
  percent: number;
  wakePercent: number;
  rampPercent: number;
  perWakeupUs: number;
}

/**
 * Added time per second of the window (us), in two halves:
 * - the wake-up half, per idle state: each entry pays the wake-up cost of a gap of that state's
 *   mean period (measured, at most the state's published exit latency; or that latency). Only
 *   where the system has idle states to choose from: without a cpuidle driver (a virtual
 *   machine's halt) the wake-up time is the hypervisor's, the same under every plan, and none of
 *   it is the plan's;
 * - the ramp half, per CPU: each wake-up pays the ramp loss after a gap drawn from that CPU's idle
 *   periods (split as the idle states split them, idleGapsOf), for a busy period of that CPU's mean.
 * The share is of the work: the busy time observed less the ramp's loss, which it contains.
 */
const totals = (
  o: WorkloadObservation,
  costs: PlanCosts,
  pick: Pick3,
  shape: 'exponential' | 'mean',
): Totals => {
  const busyPerSecondUs = ((o.busySeconds ?? 0) * 1e6) / o.windowSeconds;
  const published = { mid: 1, low: 0.5, high: 1 }[pick];
  let wake = 0;
  for (const s of statesOf(o)) {
    const gaps = gapsOf(s.meanPeriodUs ?? 0, shape);
    // A state's published exit latency is its worst case: a wake-up measured dearer than that
    // pays the rest to the platform (a hypervisor's halt exit, the interrupt's delivery), under
    // every plan alike, so only up to the exit latency is the state's, and the plan's.
    const perEntry = costs.wake.length
      ? Math.min(
          avg(gaps, (g) => wakeCostAt(costs, g, pick)),
          s.exitLatencyUs ?? Number.POSITIVE_INFINITY,
        )
      : (s.exitLatencyUs ?? 0) * published;
    wake += s.entriesPerSecond * perEntry;
  }
  let ramp = 0;
  let entries = 0;
  const split = statesOf(o).flatMap((s) =>
    s.meanPeriodUs ? [{ entriesPerSecond: s.entriesPerSecond, meanPeriodUs: s.meanPeriodUs }] : [],
  );
  for (const c of cpusOf(o)) {
    if (c.entriesPerSecond <= 0) continue;
    const busyUs = c.busyUsPerSecond / c.entriesPerSecond;
    const gaps = idleGapsOf(split, c.meanIdleUs, shape);
    ramp +=
      c.entriesPerSecond * gaps.reduce((t, g) => t + g.weight * rampLossAt(costs, g.gapUs, busyUs, pick), 0);
    entries += c.entriesPerSecond;
  }
  // Under the plan in force the busy time observed holds what the ramp lost (a core running slowly
  // is busy), so the work itself is the busy time less that loss; a wake-up is spent idle.
  const workUs = Math.max(busyPerSecondUs - ramp, busyPerSecondUs * MIN_WORK_SHARE);
  const pct = (us: number) => (busyPerSecondUs > 0 ? (us / workUs) * 100 : 0);
  return {
    percent: pct(wake + ramp),
    wakePercent: pct(wake),
    rampPercent: pct(ramp),
    perWakeupUs: entries ? (wake + ramp) / entries : 0,
  };
};

export type EstimateOutcome =
  | { estimate: WorkloadEstimate; reason: null }
  | { estimate: null; reason: string };

/** Why the observation carries no estimate, or null when it does. */
export const whyNoEstimate = (o: WorkloadObservation, costs: PlanCosts): string | null => {
  if (o.windowSeconds <= 0 || o.busyShare === null || o.busySeconds === null || !o.idleEntriesPerSecond)
    return o.idleEntriesPerSecond === null
      ? 'this system counts neither idle entries nor wake-ups: nothing to estimate from'
      : TOO_LITTLE_WORK;
  if (o.busyShare < MIN_BUSY_SHARE || o.busySeconds < MIN_BUSY_SECONDS) return TOO_LITTLE_WORK;
  if (!costs.wake.length && !costs.ramp.length && !statesOf(o).some((s) => s.exitLatencyUs !== null))
    return 'no benchmark under the plan in force and no published exit latencies: run run_cpu_benchmark, then ask again';
  return null;
};

/**
 * The estimate: the middle from the middle costs with exponential idle periods; the range from
 * the low and high costs and both shapes of the distribution (all periods equal to the mean, or
 * memoryless), whichever is lower or higher.
 */
export const estimateWorkloadCost = (
  o: WorkloadObservation,
  costs: PlanCosts,
  performance?: PlanCosts,
): EstimateOutcome => {
  const reason = whyNoEstimate(o, costs);
  if (reason) return { estimate: null, reason };
  const mid = totals(o, costs, 'mid', 'exponential');
  const low = Math.min(
    totals(o, costs, 'low', 'exponential').percent,
    totals(o, costs, 'low', 'mean').percent,
  );
  const high = Math.max(
    totals(o, costs, 'high', 'exponential').percent,
    totals(o, costs, 'high', 'mean').percent,
  );
  const recover = performance ? totals(o, performance, 'mid', 'exponential').percent : undefined;
  return {
    reason: null,
    estimate: {
      addedPercent: round1(mid.percent),
      low: round1(Math.min(low, mid.percent)),
      high: round1(Math.max(high, mid.percent)),
      addedUsPerWakeup: round1(mid.perWakeupUs),
      wakeUpPercent: round1(mid.wakePercent),
      rampPercent: round1(mid.rampPercent),
      basis: costs.basis,
      ...(costs.benchmarkId ? { benchmarkId: costs.benchmarkId } : {}),
      ...(recover !== undefined && performance
        ? {
            recoverablePercent: round1(Math.max(0, mid.percent - recover)),
            ...(performance.benchmarkId ? { recoverableFrom: performance.benchmarkId } : {}),
          }
        : {}),
    },
  };
};
