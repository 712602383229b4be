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

/** Below this much work in the window the counters' noise outweighs the work: no estimate. */
export const MIN_BUSY_SHARE = 0.005;
export const MIN_BUSY_SECONDS = 0.2;

const round1 = (n: number) => Math.round(n * 10) / 10;

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

const positionOf = (points: readonly { gapUs: number }[], gapUs: number): Position => {
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
const readAt = (at: Position, values: readonly number[], shrinks: boolean): number => {
  if (at.i < 0) return 0;
  const a = values[at.i]!;
  if (at.under < 1) return shrinks ? a * at.under : 0;
  return at.t ? a + at.t * (values[at.i + 1]! - a) : a;
};

type Pick3 = keyof Range;

/** The wake-up cost after a gap: 0 at and below the shortest gap measured (that floor no plan removes). */
export const wakeCostAt = (costs: PlanCosts, gapUs: number, pick: Pick3): number =>
  wakeCosts(costs, pick)(gapUs);

/** wakeCostAt as a function of the gap, for one pick of the costs. */
const wakeCosts = (costs: PlanCosts, pick: Pick3): ((gapUs: number) => number) => {
  const values = costs.wake.map((w) => w.costUs[pick]);
  return (gapUs) => Math.max(0, readAt(positionOf(costs.wake, gapUs), values, false));
};

/** A piecewise-linear loss by work from (0, 0), held at its highest so far, flat beyond its last point. */
const lossByWork = (points: readonly { workUs: number; lossUs: Range }[], workUs: number, pick: Pick3) => {
  let beforeWork = 0;
  let beforeLoss = 0;
  for (const c of points) {
    const loss = Math.max(beforeLoss, c.lossUs[pick], 0);
    if (workUs <= c.workUs)
      return c.workUs > beforeWork
        ? beforeLoss + ((loss - beforeLoss) * (workUs - beforeWork)) / (c.workUs - beforeWork)
        : loss;
    beforeWork = c.workUs;
    beforeLoss = loss;
  }
  return beforeLoss;
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

/**
 * Each measured gap's value, fitted never to fall as the gap grows: a clock falls as far or
 * further the longer it waits, so a smaller loss measured after a longer gap is the benchmark's
 * noise (or a stop-and-go's luck), not the clock. The least-squares fit that never falls (pool
 * adjacent violators: a run of values out of order is replaced by its mean), so one lucky or
 * unlucky gap moves its neighbours a little instead of setting every longer gap.
 */
const rising = (n: number, value: (i: number) => number): number[] => {
  // The blocks of pooled values so far, as a stack of their sums and counts.
  const sums = new Float64Array(n);
  const counts = new Int32Array(n);
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
 * The time a busy period of `busyUs` of work loses to the clock after a gap, the larger of what
 * two measurements say, each held rising with the gap (rising) and interpolated in log(gap) between
 * its gaps (below the shortest the loss shrinks in proportion to the gap, above the longest it
 * stays):
 * - the bursts after idle (pointLoss): a burst after a single gap, the clock as a long burst left it;
 * - the request stream, for work up to its largest request: requests one after another after the
 *   gap, the clock as short requests leave it (a governor that short bursts never raise keeps it
 *   low from one to the next, which the bursts after idle, each after a long burst, cannot see).
 */
export const rampLossAt = (costs: PlanCosts, gapUs: number, busyUs: number, pick: Pick3): number => {
  const { ladder, stream } = lossesAtGaps(costs, busyUs, pick);
  return Math.max(
    0,
    readAt(positionOf(costs.ramp, gapUs), ladder, true),
    readAt(positionOf(costs.stream ?? [], gapUs), stream, true),
  );
};

/** Each measurement's losses at its own gaps for `busyUs` of work, held rising with the gap. */
const lossesAtGaps = (costs: PlanCosts, busyUs: number, pick: Pick3) => {
  const stream = costs.stream ?? [];
  return {
    ladder: rising(costs.ramp.length, (i) => pointLoss(costs.ramp[i]!, busyUs, pick)),
    stream: rising(stream.length, (i) => {
      const points = stream[i]!.points;
      return lossByWork(points, Math.min(busyUs, points[points.length - 1]?.workUs ?? 0), pick);
    }),
  };
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
 * One CPU's pattern over the window, per second: its wake-ups, its idle time, its busy time and
 * the bursts of work that end its idle gaps (the work's own bursts where the processes were read,
 * else its wake-ups). The clock ramps per core, and a mean over CPUs mixes a busy core's short gaps
 * with an idle core's long ones, so the ramp half is taken CPU by CPU.
 */
interface CpuPattern {
  /** Whether the bursts are the work's own (else wake-ups, blips included). */
  workBursts: boolean;
  entriesPerSecond: number;
  idleUsPerSecond: number;
  busyUsPerSecond: number;
  burstsPerSecond: number;
}

/**
 * The CPUs listed one by one, and the rest (beyond the listed busiest) as one more pattern made of
 * what the totals leave; the totals alone when no CPU is listed. Work bursts count where the
 * observation has them (Linux, the processes read covering the work), else every wake-up is taken
 * to end a gap.
 */
const cpusOf = (o: WorkloadObservation): CpuPattern[] => {
  const window = o.windowSeconds;
  const withBursts = o.workBurstsPerSecond !== null && o.workBurstsPerSecond !== undefined;
  const totalEntries = o.idleEntriesPerSecond ?? 0;
  const totalBusy = ((o.busySeconds ?? 0) * 1e6) / window;
  const totalIdle = (o.meanIdlePeriodUs ?? 0) * totalEntries;
  const totalBursts = withBursts ? (o.workBurstsPerSecond ?? 0) : totalEntries;
  const listed = o.perCpu.flatMap((c) =>
    c.busyShare !== null && c.idleEntriesPerSecond && c.meanIdlePeriodUs !== null
      ? [
          {
            workBursts: withBursts,
            entriesPerSecond: c.idleEntriesPerSecond,
            idleUsPerSecond: c.meanIdlePeriodUs * c.idleEntriesPerSecond,
            busyUsPerSecond: c.busyShare * 1e6,
            burstsPerSecond: withBursts ? (c.workBurstsPerSecond ?? 0) : c.idleEntriesPerSecond,
          },
        ]
      : [],
  );
  if (!listed.length)
    return [
      {
        workBursts: withBursts,
        entriesPerSecond: totalEntries,
        idleUsPerSecond: totalIdle,
        busyUsPerSecond: totalBusy,
        burstsPerSecond: totalBursts,
      },
    ];
  const rest = {
    cpus: o.cpus - listed.length,
    entriesPerSecond: totalEntries - listed.reduce((n, c) => n + c.entriesPerSecond, 0),
    busyUsPerSecond: totalBusy - listed.reduce((n, c) => n + c.busyUsPerSecond, 0),
    burstsPerSecond: totalBursts - listed.reduce((n, c) => n + c.burstsPerSecond, 0),
  };
  if (rest.cpus > 0 && rest.entriesPerSecond > 0 && rest.busyUsPerSecond >= 0)
    listed.push({
      workBursts: withBursts,
      entriesPerSecond: rest.entriesPerSecond,
      idleUsPerSecond: Math.max(0, rest.cpus * 1e6 - rest.busyUsPerSecond),
      busyUsPerSecond: rest.busyUsPerSecond,
      burstsPerSecond: Math.max(0, Math.min(rest.burstsPerSecond, rest.entriesPerSecond)),
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

/** The search for the work ends within this share of the busy period, or after SEARCH_STEPS. */
const SEARCH_TOLERANCE = 1e-4;
const SEARCH_STEPS = 40;

/**
 * The work in each of a CPU's bursts: a busy period observed under the plan in force holds its
 * work and what the ramp took from it (a core running slowly is busy), so the work `w` is the one
 * for which w + E[loss(G, w)] is the busy period observed. Found between 0 (all of it loss) and
 * the busy period (none of it) by false position with the Illinois rule (each step draws the line
 * between the ends; an end kept twice has its value halved), which takes a handful of steps where
 * halving the interval takes 14; an E[loss] that jumps (every burst raising the clock from some
 * work on) still narrows the interval to where it jumps.
 */
const workOf = (loss: (w: number) => number, busyUs: number): number => {
  const excess = (w: number) => w + loss(w) - busyUs;
  const tolerance = busyUs * SEARCH_TOLERANCE;
  let lo = 0;
  let atLo = excess(lo);
  if (atLo >= 0) return lo;
  let hi = busyUs;
  let atHi = excess(hi);
  if (atHi <= tolerance) return hi;
  let kept = 0;
  for (let i = 0; i < SEARCH_STEPS && hi - lo > tolerance; i++) {
    const w = hi - (atHi * (hi - lo)) / (atHi - atLo);
    const at = excess(w);
    if (Math.abs(at) <= tolerance) return w;
    if (at > 0) {
      hi = w;
      atHi = at;
      if (kept === -1) atLo /= 2;
      kept = -1;
    } else {
      lo = w;
      atLo = at;
      if (kept === 1) atHi /= 2;
      kept = 1;
    }
  }
  return lo;
};

/**
 * A ramp has ended at the first point of the loss curve from which the rest of the burst loses at
 * less than this share of the rate it had lost at until then (a plateau, whatever a late
 * interruption adds at the end).
 */
const RAMP_DONE_RATE = 0.25;

/**
 * The work (us) a burst needs to bring the clock up, from the loss curve after the longest gap:
 * the first point from which the rest of the burst loses at less than a quarter of its mean rate
 * so far; Infinity where there is none (the loss still growing at the burst's end: a burst as long
 * as the benchmark's does not raise it). 0 (every burst raises it) where no curve was measured
 * (results of earlier versions) or nothing was lost.
 */
const raiseWorkUs = (costs: PlanCosts, pick: Pick3): number => {
  const curve = costs.ramp[costs.ramp.length - 1]?.curve ?? [];
  const last = curve[curve.length - 1];
  if (!last || curve.length < 2 || last.lossUs[pick] <= 0) return 0;
  for (const c of curve.slice(0, -1)) {
    const lost = c.lossUs[pick];
    if (lost <= 0) continue;
    const rest = (last.lossUs[pick] - lost) / (last.workUs - c.workUs);
    if (rest < RAMP_DONE_RATE * (lost / c.workUs)) return c.workUs;
  }
  return Number.POSITIVE_INFINITY;
};

/**
 * The mean loss of a burst of `workUs` after the gaps given (weighed; made once per CPU and costs,
 * then asked for each amount of work the search tries), the clock's state carried
 * from one burst to the next: after a gap `g` the clock is down by d(g) = loss(g) / loss after the
 * longest gap (the share of its whole fall), and a burst raises it again only when it has as much
 * work as the ramp takes (raiseWorkUs; with exponential bursts of mean `workUs` the chance
 * exp(-R / workUs), with every burst at its mean all or nothing). So the clock at a burst's start
 * is down by s = max(d(g), s_before x (1 - raise)): a governor that short bursts never raise stays
 * low through the short gaps between them once a long gap has let it fall, as a server answering
 * short queries sees it. The mean is found by iterating that to its fixed point; with every burst
 * raising the clock it is the mean of d(g), each burst paying the loss after its own gap.
 */
const burstModel = (
  costs: PlanCosts,
  gaps: readonly { gapUs: number; weight: number }[],
  pick: Pick3,
  shape: 'exponential' | 'mean',
  carried: boolean,
): ((workUs: number) => number) => {
  // Shortest gap first, so that the clock's fall d(g), which grows with the gap, comes sorted.
  const sorted = [...gaps].sort((a, b) => a.gapUs - b.gapUs);
  const onLadder = sorted.map((g) => positionOf(costs.ramp, g.gapUs));
  const onStream = sorted.map((g) => positionOf(costs.stream ?? [], g.gapUs));
  const weights = Float64Array.from(sorted, (g) => g.weight);
  const r = raiseWorkUs(costs, pick);
  const shares = new Float64Array(sorted.length);
  return (workUs) => {
    const { ladder, stream } = lossesAtGaps(costs, workUs, pick);
    const down = Math.max(0, ladder[ladder.length - 1] ?? 0, stream[stream.length - 1] ?? 0);
    let mean = 0;
    for (let k = 0; k < sorted.length; k++) {
      const d = Math.max(0, readAt(onLadder[k]!, ladder, true), readAt(onStream[k]!, stream, true));
      mean += weights[k]! * d;
      shares[k] = down > 0 ? Math.min(1, d / down) : 0;
    }
    if (down <= 0 || !carried) return mean;
    const raise = shape === 'mean' ? (workUs >= r ? 1 : 0) : Number.isFinite(r) ? Math.exp(-r / workUs) : 0;
    return clockDown(weights, shares, 1 - raise) * down;
  };
};

/**
 * The least s with s = sum_i w_i x max(d_i, q x s), the clock's mean state over bursts (q: the
 * chance a burst leaves it where it found it; d_i: the share of its whole fall after gap i, rising
 * with i). Each choice of how many d_i lie below q x s makes the equation linear, s = A / (1 - q B)
 * (A: sum of w_i d_i above, B: sum of w_i below); the first choice whose s agrees with it is the
 * answer. q = 0 gives the mean of d, q = 1 the largest d (a clock that no burst raises ends as low
 * as the longest gap let it fall).
 */
const clockDown = (w: Float64Array, d: Float64Array, q: number): number => {
  const n = d.length;
  const top = n ? d[n - 1]! : 0;
  if (top <= 0) return 0;
  let above = 0;
  for (let k = 0; k < n; k++) above += w[k]! * d[k]!;
  let below = 0;
  for (let k = 0; k <= n; k++) {
    const denominator = 1 - q * below;
    if (denominator > 1e-12) {
      const s = above / denominator;
      const lo = k > 0 ? d[k - 1]! : Number.NEGATIVE_INFINITY;
      const hi = k < n ? d[k]! : Number.POSITIVE_INFINITY;
      if (lo <= q * s + 1e-12 && q * s <= hi + 1e-12) return Math.min(1, s);
    }
    if (k < n) {
      above -= w[k]! * d[k]!;
      below += w[k]!;
    }
  }
  return top;
};

interface Totals {
  /** Added time per second (us), each half. */
  wakeUs: number;
  rampUs: number;
  /** What the same work would lose under the floor's costs (a performance plan's), us per second. */
  floorRampUs: number;
  /** The floor's wake-up half, us per second. */
  floorWakeUs: number;
  busyUs: number;
  entries: number;
}

/**
 * Added time per second of the window (us), in two halves:
 * - the wake-up half, per idle state: each entry pays the wake-up cost of a gap of that state's
 *   mean period (measured, at most the state's published exit latency; or that latency). Only
 *   where the system has idle states to choose from: without a cpuidle driver (a virtual
 *   machine's halt) the wake-up time is the hypervisor's, the same under every plan, and none of
 *   it is the plan's;
 * - the ramp half, per CPU: each burst of work pays the ramp loss after a gap drawn from that
 *   CPU's idle periods per burst (split as the idle states split them, idleGapsOf) for the work of
 *   its busy period (burstLoss).
 */
const totals = (
  o: WorkloadObservation,
  costs: PlanCosts,
  pick: Pick3,
  shape: 'exponential' | 'mean',
  floor?: { costs: PlanCosts; pick: Pick3 },
): Totals => {
  const busyPerSecondUs = ((o.busySeconds ?? 0) * 1e6) / o.windowSeconds;
  const wake = wakeHalf(o, costs, pick, shape);
  let ramp = 0;
  let floorRamp = 0;
  let entries = 0;
  const split = statesOf(o).flatMap((s) =>
    s.meanPeriodUs ? [{ entriesPerSecond: s.entriesPerSecond, meanPeriodUs: s.meanPeriodUs }] : [],
  );
  for (const c of cpusOf(o)) {
    entries += c.entriesPerSecond;
    if (c.burstsPerSecond <= 0 || (!costs.ramp.length && !costs.stream?.length)) continue;
    const gaps = idleGapsOf(split, c.idleUsPerSecond / c.burstsPerSecond, shape);
    const busyUs = c.busyUsPerSecond / c.burstsPerSecond;
    // Counted by wake-ups a burst's work is the busy time spread over blips too: it says nothing of
    // whether a burst finished the ramp, so each is taken to pay for its own gap.
    const carried = c.workBursts;
    const work = workOf(burstModel(costs, gaps, pick, shape, carried), busyUs);
    ramp += c.burstsPerSecond * (busyUs - work);
    if (floor)
      floorRamp += c.burstsPerSecond * burstModel(floor.costs, gaps, floor.pick, shape, carried)(work);
  }
  return {
    wakeUs: wake,
    rampUs: ramp,
    floorRampUs: floorRamp,
    floorWakeUs: floor ? wakeHalf(o, floor.costs, floor.pick, shape) : 0,
    busyUs: busyPerSecondUs,
    entries,
  };
};

/** The wake-up half (us per second): see totals. */
const wakeHalf = (
  o: WorkloadObservation,
  costs: PlanCosts,
  pick: Pick3,
  shape: 'exponential' | 'mean',
): number => {
  const published = { mid: 1, low: 0.5, high: 1 }[pick];
  const wakeAt = wakeCosts(costs, pick);
  let wake = 0;
  for (const s of statesOf(o)) {
    const gaps = gapsOf(s.meanPeriodUs ?? 0, shape);
    // A state's published exit latency is its worst case: a wake-up measured dearer than that
    // pays the rest to the platform (a hypervisor's halt exit, the interrupt's delivery), under
    // every plan alike, so only up to the exit latency is the state's, and the plan's.
    const perEntry = costs.wake.length
      ? Math.min(avg(gaps, wakeAt), s.exitLatencyUs ?? Number.POSITIVE_INFINITY)
      : (s.exitLatencyUs ?? 0) * published;
    wake += s.entriesPerSecond * perEntry;
  }
  return wake;
};

/** The shares of one estimate (%), from the plan's totals and the performance plan's (the floor). */
interface Shares {
  percent: number;
  wakePercent: number;
  rampPercent: number;
  platformPercent: number;
  perWakeupUs: number;
  /** A time per second (us) as a share of the work (%). */
  share: (us: number) => number;
}

/**
 * The added share of the work: the wake-up half, and the ramp half less what the same work loses
 * under a performance plan (which holds the clock up: what still ramps there is the platform's, a
 * hypervisor's host or the firmware, and no plan here removes it). The work is the busy time
 * observed less the ramp's whole loss, which it holds.
 */
const shares = (plan: Totals): Shares => {
  const workUs = Math.max(plan.busyUs - plan.rampUs, 0);
  const platform = Math.min(plan.floorRampUs, plan.rampUs);
  const ramp = plan.rampUs - platform;
  const pct = (us: number) => (workUs > 0 ? (us / workUs) * 100 : 0);
  return {
    percent: pct(plan.wakeUs + ramp),
    wakePercent: pct(plan.wakeUs),
    rampPercent: pct(ramp),
    platformPercent: pct(platform),
    perWakeupUs: plan.entries ? (plan.wakeUs + ramp) / plan.entries : 0,
    share: pct,
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
 * memoryless), whichever is lower or higher. With a benchmark under a performance plan
 * (`performance`; the plan's own when it is one) the ramp that plan still shows is the platform's:
 * it is left out of addedPercent and given as platformPercent, and recoverablePercent is what
 * switching to it would take off.
 */
export const estimateWorkloadCost = (
  o: WorkloadObservation,
  costs: PlanCosts,
  performance?: PlanCosts,
): EstimateOutcome => {
  const reason = whyNoEstimate(o, costs);
  if (reason) return { estimate: null, reason };
  const floor = (pick: Pick3) => (performance ? { costs: performance, pick } : undefined);
  const planTotals = totals(o, costs, 'mid', 'exponential', floor('mid'));
  const mid = shares(planTotals);
  const range = (pick: Pick3, floorPick: Pick3) =>
    (['exponential', 'mean'] as const).map(
      (shape) => shares(totals(o, costs, pick, shape, floor(floorPick))).percent,
    );
  // The platform's ramp taken from the same benchmark as the plan's (a performance plan in force)
  // is the same measurement: its noise cancels, so both ends read it alike.
  const same =
    performance === costs ||
    (performance?.benchmarkId !== undefined && performance.benchmarkId === costs.benchmarkId);
  const low = Math.min(...range('low', same ? 'low' : 'high'));
  const high = Math.max(...range('high', same ? 'high' : 'low'));
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
      ...(performance
        ? {
            platformPercent: round1(mid.platformPercent),
            // Switching takes off the ramp above the platform's and the wake-ups the performance
            // plan's idle states would cost less.
            recoverablePercent: round1(Math.max(0, mid.percent - mid.share(planTotals.floorWakeUs))),
            ...(performance.benchmarkId ? { recoverableFrom: performance.benchmarkId } : {}),
          }
        : {}),
    },
  };
};
