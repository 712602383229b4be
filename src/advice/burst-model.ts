/**
 * The ramp half's arithmetic burst by burst: the mean loss of a burst of some work after a CPU's
 * gaps, the clock's state carried from burst to burst, and the work a busy period holds. Pure
 * functions over a plan's costs (plan-losses.ts); the workload model (workload-cost.ts) uses them.
 */
import {
  lossesAfterLongestGap,
  lossesAtGaps,
  type Pick3,
  type PlanCosts,
  positionOf,
  readAt,
} from './plan-losses.ts';

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
export const workOf = (loss: (w: number) => number, busyUs: number): number => {
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
 * How a CPU's bursts follow one another:
 * - 'own': each is a burst of the work's own (a query): after a gap `g` the clock is down by
 *   d(g) = loss(g) / loss after the longest gap (the share of its whole fall), and a burst raises
 *   it again only when it has as much work as the ramp takes (raiseWorkUs; with `bursts` equal,
 *   every one at its mean `workUs`, all or nothing; exponential, the chance exp(-R / workUs)). So
 *   the clock at a burst's start is down by s = max(d(g), s_before x (1 - raise)): a governor that
 *   short bursts never raise stays low through the short gaps between them once a long gap has let
 *   it fall, as a server answering short queries sees it;
 * - 'units': each is a unit of work counted out of longer busy periods (processes handing work to
 *   each other in turns shorter than a unit, docs/ADVICE.md "Work bursts"): a unit after a gap
 *   that did not let the clock fall goes on with the ramp where the unit before left it, and the
 *   k-th unit since a fall loses L((k + 1) w) - L(k w) of the loss curve after the longest gap, k
 *   geometric with the chance f of a fall (the mean of d(g)). Priced each on its own, a 1 ms
 *   piece of a 5 ms busy period would pay what 1 ms of work loses at a ramp's start, not its part
 *   of what the whole period loses.
 */
export type BurstsFollow = 'own' | 'units';

/**
 * The mean loss of a burst of `workUs` after the gaps given (weighed; made once per CPU and costs,
 * then asked for each amount of work the search tries), the clock's state carried from burst to
 * burst as `follow` says (BurstsFollow); with `carried` false, each burst paying the loss after its
 * own gap (the mean of d(g) over the gaps, times the whole fall's loss).
 */
export const burstModel = (
  costs: PlanCosts,
  gaps: readonly { gapUs: number; weight: number }[],
  pick: Pick3,
  bursts: 'equal' | 'exponential',
  carried: boolean,
  follow: BurstsFollow = 'own',
): ((workUs: number) => number) => {
  // Shortest gap first, so that the clock's fall d(g), which grows with the gap, comes sorted.
  const sorted = [...gaps].sort((a, b) => a.gapUs - b.gapUs);
  const onLadder = sorted.map((g) => positionOf(costs.ramp, g.gapUs));
  const onStream = sorted.map((g) => positionOf(costs.stream ?? [], g.gapUs));
  const weights = Float64Array.from(sorted, (g) => g.weight);
  const r = raiseWorkUs(costs, pick);
  const shares = new Float64Array(sorted.length);
  const afterFall = follow === 'units' ? lossAfterFall(costs, pick) : null;
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
    if (afterFall) {
      let fall = 0;
      for (let k = 0; k < sorted.length; k++) fall += weights[k]! * shares[k]!;
      return chainedLoss(afterFall, workUs, fall);
    }
    const raise = bursts === 'equal' ? (workUs >= r ? 1 : 0) : Number.isFinite(r) ? Math.exp(-r / workUs) : 0;
    return clockDown(weights, shares, 1 - raise) * down;
  };
};

/** Points of the loss-after-a-fall curve read once per model, evenly spaced in work. */
const FALL_CURVE_POINTS = 128;

/**
 * The loss after the longest gap as a function of the work (us), L(x): read from the costs at
 * FALL_CURVE_POINTS points up to the most work any measurement holds, linear between them, and
 * flat beyond (a burst longer than any measured loses what the longest did), so that a chain of
 * units asks for it many times at the cost of a lookup; once per costs and pick (a WeakMap, the
 * costs being read-only). Null where nothing was measured.
 */
interface FallCurve {
  stepUs: number;
  values: Float64Array;
}
const fallCurves = new WeakMap<PlanCosts, Partial<Record<Pick3, FallCurve | null>>>();
const lossAfterFall = (costs: PlanCosts, pick: Pick3): FallCurve | null => {
  const known = fallCurves.get(costs) ?? {};
  fallCurves.set(costs, known);
  if (known[pick] !== undefined) return known[pick];
  const lastWork = (points: readonly { workUs: number }[] | undefined) =>
    points?.[points.length - 1]?.workUs ?? 0;
  const most = Math.max(
    0,
    ...costs.ramp.map((p) => (p.curve?.length ? lastWork(p.curve) : p.rampUs)),
    ...(costs.stream ?? []).map((s) => lastWork(s.points)),
  );
  const stepUs = most / (FALL_CURVE_POINTS - 1);
  const curve =
    most > 0
      ? {
          stepUs,
          values: lossesAfterLongestGap(
            costs,
            Float64Array.from({ length: FALL_CURVE_POINTS }, (_, i) => i * stepUs),
            pick,
          ),
        }
      : null;
  known[pick] = curve;
  return curve;
};

const readFall = (c: FallCurve, workUs: number): number => {
  const at = workUs / c.stepUs;
  const i = Math.floor(at);
  if (i >= c.values.length - 1) return c.values[c.values.length - 1]!;
  return c.values[i]! + (c.values[i + 1]! - c.values[i]!) * (at - i);
};

/**
 * The mean loss of a unit of `workUs` in a chain of units that a fall starts with chance `fall`
 * before each: sum over k >= 0 of fall (1 - fall)^k (L((k + 1) w) - L(k w)), which sums to
 * fall^2 x sum over k >= 1 of (1 - fall)^(k - 1) L(k w); L is flat past the curve's end, where the
 * rest of the sum is fall x L_end x (1 - fall)^(K - 1) in one step.
 */
const chainedLoss = (curve: FallCurve, workUs: number, fall: number): number => {
  if (fall <= 0 || workUs <= 0) return 0;
  const f = Math.min(1, fall);
  const end = curve.stepUs * (curve.values.length - 1);
  const last = curve.values[curve.values.length - 1]!;
  let sum = 0;
  let stay = 1;
  let k = 1;
  for (; k * workUs < end && stay > 1e-9; k++) {
    sum += f * f * stay * readFall(curve, k * workUs);
    stay *= 1 - f;
  }
  return sum + f * last * stay;
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
