/**
 * A plan's measured costs (per idle gap: the wake-up cost, the time bursts of work lose while the
 * clock ramps up, from the bursts after idle and the request stream) and the losses read from them
 * at any gap and amount of work: linear in log(gap) between the gaps measured, each measurement held
 * rising with the gap. Pure functions; the workload model (workload-cost.ts) builds on them.
 */
import type { WorkloadEstimate } from '../domain/workload.ts';

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
  /**
   * The loss by the work done since the burst began (us of warm work, us lost so far), as the
   * benchmark measured it; absent in results of earlier versions, where the loss is shaped from the
   * first unit's slowdown and the ramp-up time instead.
   */
  curve?: { workUs: number; lossUs: Range }[];
}

/**
 * Short requests one after another after the same gap: what each lost by its work (us of warm
 * work, us lost), the clock in the state such a stream leaves it in.
 */
export interface StreamGap {
  gapUs: number;
  /** Smallest work first. */
  points: { workUs: number; lossUs: Range }[];
}

export interface PlanCosts {
  basis: WorkloadEstimate['basis'];
  benchmarkId?: string;
  /** Shortest gap first; empty: the wake-up half is taken from the states' exit latencies. */
  wake: WakePoint[];
  /** Shortest gap first; empty: no clock ramp known. */
  ramp: RampPoint[];
  /** Shortest gap first; absent or empty: no request stream measured (results of earlier versions). */
  stream?: StreamGap[];
}

/**
 * Where a gap falls among a measurement's gaps (shortest first): between points i and i + 1 at t
 * of the way in log(gap), at the last point beyond it, or below the first at `under` (gap / first
 * gap; else 1). i is -1 without points.
 */
interface Position {
  i: number;
  t: number;
  under: number;
}

export const positionOf = (points: readonly { gapUs: number }[], gapUs: number): Position => {
  if (!points.length) return { i: -1, t: 0, under: 1 };
  const first = points[0]!.gapUs;
  if (gapUs <= first) return { i: 0, t: 0, under: gapUs / first };
  for (let i = 1; i < points.length; i++) {
    const b = points[i]!.gapUs;
    if (gapUs <= b) {
      const a = points[i - 1]!.gapUs;
      return { i: i - 1, t: (Math.log(gapUs) - Math.log(a)) / (Math.log(b) - Math.log(a)), under: 1 };
    }
  }
  return { i: points.length - 1, t: 0, under: 1 };
};

/**
 * The measurement's values (one per gap) read at a position: linear in log(gap) between points,
 * the last beyond them; below the first in proportion to the gap (`shrinks`, a clock that drops
 * gradually) or 0.
 */
export const readAt = (at: Position, values: readonly number[], shrinks: boolean): number => {
  if (at.i < 0) return 0;
  const a = values[at.i]!;
  if (at.under < 1) return shrinks ? a * at.under : 0;
  return at.t ? a + at.t * (values[at.i + 1]! - a) : a;
};

export type Pick3 = keyof Range;

/** The wake-up cost after a gap: 0 at and below the shortest gap measured (that floor no plan removes). */
export const wakeCostAt = (costs: PlanCosts, gapUs: number, pick: Pick3): number =>
  wakeCosts(costs, pick)(gapUs);

/** wakeCostAt as a function of the gap, for one pick of the costs. */
export const wakeCosts = (costs: PlanCosts, pick: Pick3): ((gapUs: number) => number) => {
  const values = costs.wake.map((w) => w.costUs[pick]);
  return (gapUs) => Math.max(0, readAt(positionOf(costs.wake, gapUs), values, false));
};

/**
 * A piecewise-linear loss by work from (0, 0), held at its highest so far, flat beyond its last
 * point: its value at each of `works` (ascending), in one pass over the points.
 */
const lossesByWork = (
  points: readonly { workUs: number; lossUs: Range }[],
  works: ArrayLike<number>,
  pick: Pick3,
  out = new Float64Array(works.length),
): Float64Array => {
  let i = 0;
  let beforeWork = 0;
  let beforeLoss = 0;
  let loss = points.length ? Math.max(0, points[0]!.lossUs[pick]) : 0;
  for (let j = 0; j < works.length; j++) {
    const workUs = works[j]!;
    while (i < points.length && workUs > points[i]!.workUs) {
      beforeWork = points[i]!.workUs;
      beforeLoss = loss;
      i++;
      if (i < points.length) loss = Math.max(beforeLoss, points[i]!.lossUs[pick], 0);
    }
    const c = points[i];
    out[j] = !c
      ? beforeLoss
      : c.workUs > beforeWork
        ? beforeLoss + ((loss - beforeLoss) * (workUs - beforeWork)) / (c.workUs - beforeWork)
        : loss;
  }
  return out;
};

/** lossesByWork at one amount of work, through buffers reused from call to call. */
const oneWork = new Float64Array(1);
const oneLoss = new Float64Array(1);
const lossByWork = (points: readonly { workUs: number; lossUs: Range }[], workUs: number, pick: Pick3) => {
  oneWork[0] = workUs;
  return lossesByWork(points, oneWork, pick, oneLoss)[0]!;
};

/**
 * What one measured point of the ladder says a busy period of `busyUs` of work loses. From the
 * loss curve: read at that much work (linear between its points, in proportion below the first,
 * the whole burst's loss beyond the last), never less than at a shorter piece of work. Without one
 * (results of earlier versions): the first unit runs slowed by the first unit's measured slowdown
 * and the rest of the loss is spread over the rest of the ramp.
 */
const pointLoss = (p: RampPoint, busyUs: number, pick: Pick3): number => {
  if (p.curve?.length) return lossByWork(p.curve, busyUs, pick);
  const loss = Math.max(0, p.lossUs[pick]);
  const start = Math.max(0, p.startSlowdown[pick]);
  if (p.rampUs <= 0) return 0;
  const unitUs = Math.min(p.unitUs, p.rampUs);
  const head = start * Math.min(busyUs, unitUs);
  const rest = Math.max(0, loss - start * unitUs);
  const tail = p.rampUs > unitUs ? rest * Math.min(1, Math.max(0, busyUs - unitUs) / (p.rampUs - unitUs)) : 0;
  return head + tail;
};

// rising's blocks of pooled values so far, as a stack of their sums and counts: grown as needed and
// reused from call to call (an estimate fits a few hundred times), so `value` must not fit itself.
let sums = new Float64Array(16);
let counts = new Int32Array(16);

/**
 * Each measured gap's value, fitted never to fall as the gap grows: a clock falls as far or
 * further the longer it waits, so a smaller loss measured after a longer gap is the benchmark's
 * noise (or a stop-and-go's luck), not the clock. The least-squares fit that never falls (pool
 * adjacent violators: a run of values out of order is replaced by its mean), so one lucky or
 * unlucky gap moves its neighbours a little instead of setting every longer gap.
 */
const rising = (n: number, value: (i: number) => number): number[] => {
  if (sums.length < n) {
    sums = new Float64Array(n);
    counts = new Int32Array(n);
  }
  let top = -1;
  for (let i = 0; i < n; i++) {
    top++;
    sums[top] = value(i);
    counts[top] = 1;
    while (top > 0 && sums[top - 1]! / counts[top - 1]! > sums[top]! / counts[top]!) {
      sums[top - 1] = sums[top - 1]! + sums[top]!;
      counts[top - 1] = counts[top - 1]! + counts[top]!;
      top--;
    }
  }
  const out = new Array<number>(n);
  for (let b = 0, i = 0; b <= top; b++) for (let k = 0; k < counts[b]!; k++) out[i++] = sums[b]! / counts[b]!;
  return out;
};

/**
 * The time a busy period of `busyUs` of work loses to the clock after a gap, from two measurements,
 * each held rising with the gap (rising) and interpolated in log(gap) between its gaps (below the
 * shortest the loss shrinks in proportion to the gap, above the longest it stays):
 * - the request stream, for the work up to its largest request: requests one after another after
 *   the gap, the clock in the state requests like the work's own leave it in (a governor that
 *   short bursts never raise keeps it low from one to the next);
 * - the bursts after idle (pointLoss), for the work beyond that: what their loss curve adds from
 *   the stream's largest request on. Each of them follows a long burst, a clock history the work's
 *   own requests do not have, so where the stream measured, its measurement of the same history
 *   counts, higher or lower (under the PostgreSQL check's emulated ramps the bursts after idle lost
 *   up to 1.8 times what the stream's requests of the same work lost, and the queries less than
 *   the bursts after idle: docs/BENCHMARK.md "The request stream for short work").
 * Without a stream (results of earlier versions) the bursts after idle say it all.
 */
export const rampLossAt = (costs: PlanCosts, gapUs: number, busyUs: number, pick: Pick3): number => {
  const { ladder, stream } = lossesAtGaps(costs, busyUs, pick);
  return (
    Math.max(0, readAt(positionOf(costs.ramp, gapUs), ladder, true)) +
    Math.max(0, readAt(positionOf(costs.stream ?? [], gapUs), stream, true))
  );
};

/** The stream's largest request (us of work) measured after every one of its gaps; 0 without one. */
const streamReach = (costs: PlanCosts): number =>
  costs.stream?.length ? Math.min(...costs.stream.map((g) => g.points[g.points.length - 1]?.workUs ?? 0)) : 0;

/**
 * Each measurement's part of the loss of `busyUs` of work at its own gaps (rampLossAt adds them):
 * the stream's loss for the work up to its reach, and what the bursts after idle add beyond it,
 * each held rising with the gap.
 */
export const lossesAtGaps = (costs: PlanCosts, busyUs: number, pick: Pick3) => {
  const stream = costs.stream ?? [];
  const within = Math.min(busyUs, streamReach(costs));
  const ladderAt = (w: number) => rising(costs.ramp.length, (i) => pointLoss(costs.ramp[i]!, w, pick));
  const ladder = ladderAt(busyUs);
  if (within > 0) {
    const before = ladderAt(within);
    for (let i = 0; i < ladder.length; i++)
      ladder[i] = Math.max(0, Math.max(0, ladder[i]!) - Math.max(0, before[i]!));
  }
  return {
    ladder,
    // Flat beyond its last point, a stream's loss by work needs no cap at its largest request.
    stream: rising(stream.length, (i) => lossByWork(stream[i]!.points, within, pick)),
  };
};

/**
 * The loss of a burst after a whole fall, at each of `works` (ascending): what lossesAtGaps holds
 * at each measurement's longest gap, added, read for many amounts of work at once (one pass over
 * each loss curve rather than one per amount).
 */
export const lossesAfterLongestGap = (costs: PlanCosts, works: Float64Array, pick: Pick3): Float64Array => {
  const curves = (at: Float64Array) =>
    costs.ramp.map((p) =>
      p.curve?.length ? lossesByWork(p.curve, at, pick) : Float64Array.from(at, (w) => pointLoss(p, w, pick)),
    );
  const reach = streamReach(costs);
  const within = Float64Array.from(works, (w) => Math.min(w, reach));
  const ladder = curves(works);
  const before = reach > 0 ? curves(within) : [];
  const stream = (costs.stream ?? []).map((g) => lossesByWork(g.points, within, pick));
  const out = new Float64Array(works.length);
  for (let j = 0; j < works.length; j++) {
    const beyond = Math.max(0, lastRising(ladder, j)) - (reach > 0 ? Math.max(0, lastRising(before, j)) : 0);
    out[j] = Math.max(0, beyond) + Math.max(0, lastRising(stream, j));
  }
  return out;
};

/**
 * The last value of `rising` over the rows' j-th values without building the fit: the least-squares
 * fit that never falls ends at the largest mean of a tail of the values (max over i of the mean of
 * values i..n-1), the isotonic regression's max-min formula at its last point. 0 without rows.
 */
export const lastRising = (rows: readonly Float64Array[], j: number): number => {
  let sum = 0;
  let best = Number.NEGATIVE_INFINITY;
  for (let i = rows.length - 1; i >= 0; i--) {
    sum += rows[i]![j]!;
    best = Math.max(best, sum / (rows.length - i));
  }
  return rows.length ? best : 0;
};
