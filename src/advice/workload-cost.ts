/**
 * The workload cost model: what the plan in force adds to the CPU work observed, from the idle
 * pattern (entries and mean idle period per state, mean busy period between wake-ups) and the
 * plan's costs (per idle gap: the wake-up cost, and the time a burst loses while the clock ramps
 * up). A model of a clock and of idle states, after PowerNap (Meisner et al., ASPLOS'09) and
 * Meisner et al. (ISCA'11): each wake-up pays the wake cost of the gap before it, and the work
 * that follows runs slowed until the clock is up again. Pure functions; docs/ADVICE.md has the
 * model, its assumptions and where it is wrong.
 */
import {
  type ObservedState,
  TOO_LITTLE_WORK,
  type WorkloadEstimate,
  type WorkloadObservation,
} from '../domain/workload.ts';

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

/** What one wake-up out of `state` adds (us), idle periods taken as exponential or all equal. */
const perWakeup = (
  costs: PlanCosts,
  state: Pick<ObservedState, 'meanPeriodUs' | 'exitLatencyUs'>,
  busyUs: number,
  pick: Pick3,
  shape: 'exponential' | 'mean',
): { wake: number; ramp: number } => {
  const m = state.meanPeriodUs ?? 0;
  const gaps = shape === 'mean' ? [m] : EXP_QUANTILES.map((q) => q * m);
  const avg = (f: (g: number) => number) => gaps.reduce((s, g) => s + f(g), 0) / gaps.length;
  const published = { mid: 1, low: 0.5, high: 1 }[pick];
  const wake = costs.wake.length
    ? avg((g) => wakeCostAt(costs, g, pick))
    : (state.exitLatencyUs ?? 0) * published;
  return { wake, ramp: avg((g) => rampLossAt(costs, g, busyUs, pick)) };
};

/** The states the model weighs: the observed ones, or one for all entries when none is counted. */
const statesOf = (
  o: WorkloadObservation,
): Pick<ObservedState, 'meanPeriodUs' | 'exitLatencyUs' | 'entriesPerSecond'>[] =>
  o.states.length
    ? o.states.filter((s) => s.entriesPerSecond > 0)
    : [
        {
          meanPeriodUs: o.meanIdlePeriodUs,
          exitLatencyUs: null,
          entriesPerSecond: o.idleEntriesPerSecond ?? 0,
        },
      ];

interface Totals {
  percent: number;
  wakePercent: number;
  rampPercent: number;
  perWakeupUs: number;
}

const totals = (
  o: WorkloadObservation,
  costs: PlanCosts,
  pick: Pick3,
  shape: 'exponential' | 'mean',
): Totals => {
  const busyPerSecondUs = ((o.busySeconds ?? 0) * 1e6) / o.windowSeconds;
  const busyUs = o.meanBusyPeriodUs ?? 0;
  let wake = 0;
  let ramp = 0;
  let entries = 0;
  for (const s of statesOf(o)) {
    const w = perWakeup(costs, s, busyUs, pick, shape);
    wake += s.entriesPerSecond * w.wake;
    ramp += s.entriesPerSecond * w.ramp;
    entries += s.entriesPerSecond;
  }
  const pct = (us: number) => (busyPerSecondUs > 0 ? (us / busyPerSecondUs) * 100 : 0);
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
