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
import { burstModel, workOf } from './burst-model.ts';
import {
  burstGaps,
  busyPerSecond,
  type CpuPattern,
  cpusOf,
  gapsOf,
  QUEUED_WAKE_MIDDLE,
  queuedShare,
} from './cpu-patterns.ts';
import { type Pick3, type PlanCosts, wakeCosts } from './plan-losses.ts';

/** Below this much work in the window the counters' noise outweighs the work: no estimate. */
export const MIN_BUSY_SHARE = 0.005;
export const MIN_BUSY_SECONDS = 0.2;

const round1 = (n: number) => Math.round(n * 10) / 10;

const avg = (gaps: readonly number[], f: (g: number) => number) =>
  gaps.reduce((s, g) => s + f(g), 0) / gaps.length;

/** The states the wake-up half weighs: the observed ones that were entered. */
const statesOf = (o: WorkloadObservation) => o.states.filter((s) => s.entriesPerSecond > 0);

interface Totals {
  /** Added time per second (us), each half. */
  wakeUs: number;
  rampUs: number;
  /** What the same work would lose under the floor's costs (a performance plan's), us per second. */
  floorRampUs: number;
  /** The floor's wake-up half, us per second. */
  floorWakeUs: number;
  /** The work: the busy time in the bursts (burstBusy), us per second. */
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
 *   its busy period (burstLoss), the busy time in the bursts (burstBusy) spread over them.
 * The work they are a share of is the busy time in the bursts, on every CPU.
 */
const totals = (
  o: WorkloadObservation,
  view: CpuView,
  costs: PlanCosts,
  pick: Pick3,
  shape: 'exponential' | 'mean',
  floor?: { costs: PlanCosts; pick: Pick3 },
  queuedWake = QUEUED_WAKE_MIDDLE,
): Totals => {
  // The work: the busy time less what is no part of the work's bursts (burstBusy).
  let busyPerSecondUs = busyPerSecond(o);
  const wake = wakeHalf(o, costs, pick, shape);
  let ramp = 0;
  let floorRamp = 0;
  let entries = 0;
  for (const [i, c] of view.cpus.entries()) {
    entries += c.entriesPerSecond;
    busyPerSecondUs -= c.busyUsPerSecond - c.burstBusyUsPerSecond;
    if (c.burstsPerSecond <= 0 || (!costs.ramp.length && !costs.stream?.length)) continue;
    const gaps = view.gaps(i, shape, queuedWake);
    const busyUs = c.burstBusyUsPerSecond / c.burstsPerSecond;
    // Counted by wake-ups a burst's work is the busy time spread over blips too: it says nothing of
    // whether a burst finished the ramp, so each is taken to pay for its own gap.
    const carried = c.workBursts;
    const follow = c.inUnits ? 'units' : 'own';
    const found = workOf(burstModel(costs, gaps, pick, carried, follow), busyUs);
    ramp += c.burstsPerSecond * (busyUs - found.workUs);
    if (floor)
      floorRamp +=
        c.burstsPerSecond * found.readLoss(burstModel(floor.costs, gaps, floor.pick, carried, follow));
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

/**
 * The CPUs of an observation and the gaps before their bursts, made once per estimate: each CPU's
 * gaps once per shape and share of queued bursts (the same array for every pick and plan, which
 * the burst model places on a plan's measured gaps once), the queued requests' share counted
 * making no difference where the bursts are not the work's own.
 */
interface CpuView {
  cpus: CpuPattern[];
  gaps: (
    cpu: number,
    shape: 'exponential' | 'mean',
    queuedWake: number,
  ) => { gapUs: number; weight: number }[];
  /** What tells the gaps of every CPU under a shape and share counted apart from another's. */
  key: (shape: 'exponential' | 'mean', queuedWake: number) => string;
}
const cpuView = (o: WorkloadObservation): CpuView => {
  const cpus = cpusOf(o);
  const split = statesOf(o).flatMap((s) =>
    s.meanPeriodUs ? [{ entriesPerSecond: s.entriesPerSecond, meanPeriodUs: s.meanPeriodUs }] : [],
  );
  const made = new Map<string, { gapUs: number; weight: number }[]>();
  return {
    cpus,
    gaps: (i, shape, queuedWake) => {
      const c = cpus[i]!;
      const queued = queuedShare(c, queuedWake);
      const key = `${i} ${shape} ${queued}`;
      const known = made.get(key);
      if (known) return known;
      const gaps = burstGaps(c, split, shape, queued);
      made.set(key, gaps);
      return gaps;
    },
    key: (shape, queuedWake) => `${shape} ${cpus.map((c) => queuedShare(c, queuedWake)).join(' ')}`,
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
 * The estimate: the middle from the middle costs with exponential idle periods, the work's own
 * requests that found the CPU busy following the one before with no gap, half of them counted
 * among its wake-ups (burstGaps); the range from the low and high costs, both shapes of the
 * distribution (all periods equal to the mean, or memoryless) and all or none of those requests
 * counted, whichever is lower or higher. With a benchmark under a performance plan
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
  const view = cpuView(o);
  const planTotals = totals(o, view, costs, 'mid', 'exponential', floor('mid'));
  const mid = shares(planTotals);
  // The middle's shapes, every gap at its mean, and every queued request counted or none.
  // Those that give every CPU the same gaps (no bursts of the work's own) are taken once.
  const shapes = (
    [
      ['exponential', QUEUED_WAKE_MIDDLE],
      ['exponential', 1],
      ['exponential', 0],
      ['mean', QUEUED_WAKE_MIDDLE],
    ] as const
  ).filter(
    ([gaps, wake], i, all) => all.findIndex(([g, w]) => view.key(g, w) === view.key(gaps, wake)) === i,
  );
  const range = (pick: Pick3, floorPick: Pick3) =>
    shapes.map(([gaps, wake]) => shares(totals(o, view, costs, pick, gaps, floor(floorPick), wake)).percent);
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
