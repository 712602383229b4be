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

/** The work found in a busy period (workOf). */
export interface WorkFound {
  workUs: number;
  /**
   * A loss curve (another plan's, for the same work) read at the work found: where the loss jumps
   * there, as far between its two sides as the busy period lies, so that the curve searched reads
   * the busy period's loss, busyUs - workUs (within the search's tolerance elsewhere).
   */
  readLoss: (loss: (w: number) => number) => number;
}

/**
 * The work in each of a CPU's bursts: a busy period observed under the plan in force holds its
 * work and what the ramp took from it (a core running slowly is busy), so the work `w` is the one
 * for which w + E[loss(G, w)] is the busy period observed. Found between 0 (all of it loss) and
 * the busy period (none of it) by false position with the Illinois rule (each step draws the line
 * between the ends; an end kept twice has its value halved), which takes a handful of steps where
 * halving the interval takes 14; an E[loss] that jumps (every burst raising the clock from some
 * work on) still narrows the interval to where it jumps, and the busy period is taken to lie that
 * far between the jump's two sides.
 */
export const workOf = (loss: (w: number) => number, busyUs: number): WorkFound => {
  const at = (w: number): WorkFound => ({ workUs: w, readLoss: (f) => f(w) });
  const excess = (w: number) => w + loss(w) - busyUs;
  const tolerance = busyUs * SEARCH_TOLERANCE;
  let lo = 0;
  let atLo = excess(lo);
  if (atLo >= 0) return at(lo);
  let hi = busyUs;
  let atHi = excess(hi);
  if (atHi <= tolerance) return at(hi);
  // The ends' own values, which the Illinois rule's halving leaves alone.
  let [below, above] = [atLo, atHi];
  let kept = 0;
  for (let i = 0; i < SEARCH_STEPS && hi - lo > tolerance; i++) {
    const w = hi - (atHi * (hi - lo)) / (atHi - atLo);
    const ex = excess(w);
    if (Math.abs(ex) <= tolerance) return at(w);
    if (ex > 0) {
      hi = w;
      atHi = above = ex;
      if (kept === -1) atLo /= 2;
      kept = -1;
    } else {
      lo = w;
      atLo = below = ex;
      if (kept === 1) atHi /= 2;
      kept = 1;
    }
  }
  // How far between the ends the busy period lies; where the loss does not jump between them, any
  // curve is read once, at the work.
  const t = -below / (above - below);
  const workUs = lo + t * (hi - lo);
  const jump = above - below - (hi - lo) > tolerance;
  return { workUs, readLoss: jump ? (f) => f(lo) + t * (f(hi) - f(lo)) : (f) => f(workUs) };
};

/**
 * How a CPU's bursts follow one another. Either way the clock's progress is carried from burst to
 * burst: a burst after a gap that did not let the clock fall goes on with the ramp where the burst
 * before left it, the k-th burst since a fall the piece of the ramp from x_k to x_k + w of work,
 * L(x_k + w) - L(x_k) of the loss curve after the longest gap, k geometric with the chance f of a
 * fall (chainedLoss). The burst right after each gap g loses what was measured after it. What the
 * bursts after it carry of a whole fall is read on the whole ramp (wholeRampShares): the loss of
 * the most work measured after g over its loss after the longest gap, R(g), and f is the mean of
 * R(g). A clock that falls d(g) of the way and climbs at a steady rate has a ramp d times as short
 * and d times as slow at its start: R(g) is d(g)^2, while a burst's own first millisecond loses d
 * of a whole fall's (a tenth of a fall taken as a tenth of a chance of a whole one charged a loss
 * measured after short gaps many times over). A governor that lets the clock fall only at its
 * checks, so that after the same gap some bursts meet a whole fall and the rest none, has R(g) the
 * share that met one, at every amount of work; read at a burst's own work and squared, that share
 * came out squared too (docs/ADVICE.md, "A fall's share is read on the whole ramp"):
 * - 'own': each is a burst of the work's own (a query), a whole busy period after an idle gap. A
 *   clock part way up is no slower than one all the way down, so such a burst loses at most what
 *   it loses after a whole fall, L(w): where the loss curve grows steeper as a burst goes on (a
 *   quota that lets a burst's first millisecond through), the steeper later pieces are no part of
 *   what a query that waited first loses. A governor that short bursts never raise one by one is
 *   raised by them together, as a utilisation average is: a 2.5 ms query at 5 ms gaps brings the
 *   clock up within a few queries, not never. And it raises it with time, at checks some
 *   milliseconds apart that find the CPU busy enough since the last, a wait too short for the
 *   clock to fall being part of the stretch of work they see: x_k is how far continuous work gets
 *   up the ramp in the time the bursts before took, their work, the ramp's pieces and the mean
 *   wait between two bursts of a chain (the gaps weighed by 1 - R(g), the chance they carry it),
 *   where counted by work alone (x_k = k w) the waits added nothing to the climb (docs/ADVICE.md);
 * - 'units': each is a unit of work counted out of longer busy periods (processes handing work to
 *   each other in turns shorter than a unit, docs/ADVICE.md "Work bursts"): the pieces of one busy
 *   period lose what its loss curve says, uncapped. Priced each on its own, a 1 ms piece of a 5 ms
 *   busy period would pay what 1 ms of work loses at a ramp's start, not its part of what the whole
 *   period loses. At a unit's own millisecond the loss after a fall can be less than its noise, the
 *   whole ramp's is not.
 */
export type BurstsFollow = 'own' | 'units';

/**
 * The mean loss of a burst of `workUs` after the gaps given (weighed; made once per CPU and costs,
 * then asked for each amount of work the search tries), the clock's progress carried from burst to
 * burst as `follow` says (BurstsFollow); with `carried` false, each burst paying the loss after its
 * own gap (the mean of d(g) over the gaps, times the whole fall's loss).
 */
export const burstModel = (
  costs: PlanCosts,
  gaps: Gaps,
  pick: Pick3,
  carried: boolean,
  follow: BurstsFollow = 'own',
): ((workUs: number) => number) => {
  const { onLadder, onStream, weights } = placed(costs, gaps);
  /** The loss after the k-th gap: the two measurements' parts, added (lossesAtGaps). */
  const lossAt = (k: number, l: Losses) =>
    Math.max(0, readAt(onLadder[k]!, l.ladder, true)) + Math.max(0, readAt(onStream[k]!, l.stream, true));
  const afterFall = carried ? lossAfterFall(costs, pick) : null;
  const fell = afterFall ? wholeRampShares(costs, gaps.length, pick, afterFall, lossAt) : null;
  // The chance of a fall and the waits that carry a chain depend on the gaps alone: once per model.
  let fall = 0;
  let waited = 0;
  for (let k = 0; fell && k < gaps.length; k++) {
    fall += weights[k]! * fell[k]!;
    waited += weights[k]! * (1 - fell[k]!) * gaps[k]!.gapUs;
  }
  const waitUs = follow === 'own' ? (fall < 1 ? waited / (1 - fall) : 0) : null;
  return (workUs) => {
    const losses = lossesAtGaps(costs, workUs, pick);
    let mean = 0;
    for (let k = 0; k < gaps.length; k++) mean += weights[k]! * lossAt(k, losses);
    // A query that loses nothing after a whole fall carries nothing of one (its pieces are at most
    // that loss); units pay their busy period's pieces whatever their own first one.
    if (!afterFall || (follow === 'own' && lossAfterLongest(losses) <= 0)) return mean;
    // Each burst's loss after its own gap, and what it carries of a ramp a fall before it started:
    // queries climb it with their time and the mean wait between them that carries the chain.
    return mean + chainedLoss(afterFall, workUs, fall, waitUs);
  };
};

type Gaps = readonly { gapUs: number; weight: number }[];
interface Placed {
  onLadder: ReturnType<typeof positionOf>[];
  onStream: ReturnType<typeof positionOf>[];
  weights: Float64Array;
}
const placements = new WeakMap<Gaps, WeakMap<PlanCosts, Placed>>();
/**
 * Where the gaps fall among a plan's measured gaps, once per gaps and costs (both read-only; the
 * estimate asks for the same gaps under each pick and range end).
 */
const placed = (costs: PlanCosts, gaps: Gaps): Placed => {
  const byCosts = placements.get(gaps) ?? new WeakMap<PlanCosts, Placed>();
  placements.set(gaps, byCosts);
  const known = byCosts.get(costs);
  if (known) return known;
  const made = {
    onLadder: gaps.map((g) => positionOf(costs.ramp, g.gapUs)),
    onStream: gaps.map((g) => positionOf(costs.stream ?? [], g.gapUs)),
    weights: Float64Array.from(gaps, (g) => g.weight),
  };
  byCosts.set(costs, made);
  return made;
};

/**
 * Per gap, the share of a whole fall the bursts after it carry, read on the whole ramp: the loss of
 * the most work measured after the gap over its loss after the longest gap: d(g)^2 for a clock
 * that falls d(g) of the way and climbs at a steady rate, the share of the bursts that met a whole
 * fall for one that falls only at its checks (BurstsFollow).
 */
const wholeRampShares = (
  costs: PlanCosts,
  gaps: number,
  pick: Pick3,
  curve: FallCurve,
  lossAt: (k: number, l: Losses) => number,
): Float64Array => {
  const losses = lossesAtGaps(costs, curve.stepUs * (curve.values.length - 1), pick);
  const whole = lossAfterLongest(losses);
  return Float64Array.from({ length: gaps }, (_, k) =>
    whole > 0 ? Math.min(1, lossAt(k, losses) / whole) : 0,
  );
};

type Losses = ReturnType<typeof lossesAtGaps>;

/** The two measurements' parts add up (lossesAtGaps): after the longest gap of each, the whole fall. */
const lossAfterLongest = ({ ladder, stream }: Losses) =>
  Math.max(0, ladder[ladder.length - 1] ?? 0) + Math.max(0, stream[stream.length - 1] ?? 0);

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

/**
 * How far up the ramp `wallUs` after a fall finds the clock, as work: what continuous work has done
 * by then, x with x + L(x) = wallUs (x + L(x) read on the curve's points; past its end L is flat).
 */
const workAt = (c: FallCurve, wallUs: number): number => {
  let lo = 0;
  let hi = c.values.length - 1;
  const wall = (i: number) => i * c.stepUs + c.values[i]!;
  if (wallUs >= wall(hi)) return hi * c.stepUs + (wallUs - wall(hi));
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (wall(mid) <= wallUs) lo = mid;
    else hi = mid;
  }
  const a = wall(lo);
  const b = wall(hi);
  return (lo + (b > a ? (wallUs - a) / (b - a) : 0)) * c.stepUs;
};

const readFall = (c: FallCurve, workUs: number): number => {
  const at = workUs / c.stepUs;
  const i = Math.floor(at);
  if (i >= c.values.length - 1) return c.values[c.values.length - 1]!;
  return c.values[i]! + (c.values[i + 1]! - c.values[i]!) * (at - i);
};

/**
 * What a burst of `workUs` carries of the ramp in a chain of bursts that a fall starts with chance
 * `fall` before each, beyond the first burst's own loss: sum over k >= 1 of fall (1 - fall)^k
 * (L(x_k + w) - L(x_k)), the k-th burst starting x_k up the ramp. L is flat past the curve's end,
 * where the pieces are 0. Units of one busy period (`waitUs` null): x_k = k w, uncapped. Bursts
 * after a wait (BurstsFollow 'own', `waitUs` the mean wait between two of a chain): x_k is the work
 * continuous work has done in the time the bursts before took, their work, what they lost and the
 * waits after them (workAt), and each piece is at most L(w).
 */
const chainedLoss = (curve: FallCurve, workUs: number, fall: number, waitUs: number | null): number => {
  if (fall <= 0 || workUs <= 0) return 0;
  const f = Math.min(1, fall);
  const end = curve.stepUs * (curve.values.length - 1);
  const first = readFall(curve, workUs);
  let sum = 0;
  let stay = 1 - f;
  let wall = workUs + first + (waitUs ?? 0);
  for (let k = 1; stay > 1e-9; k++) {
    const at = waitUs === null ? k * workUs : workAt(curve, wall);
    if (at >= end) break;
    const piece = Math.max(0, readFall(curve, at + workUs) - readFall(curve, at));
    const paid = waitUs === null ? piece : Math.min(first, piece);
    sum += f * stay * paid;
    wall += workUs + piece + (waitUs ?? 0);
    stay *= 1 - f;
  }
  return sum;
};
