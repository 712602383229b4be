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
import { type Pick3, type PlanCosts, wakeCosts } from './plan-losses.ts';

/** Below this much work in the window the counters' noise outweighs the work: no estimate. */
export const MIN_BUSY_SHARE = 0.005;
export const MIN_BUSY_SECONDS = 0.2;

const round1 = (n: number) => Math.round(n * 10) / 10;

/** Gaps at the midpoints of K equal-probability slices of an exponential distribution with mean 1. */
const K = 32;
const EXP_QUANTILES = Array.from({ length: K }, (_, k) => -Math.log(1 - (k + 0.5) / K));

/** The idle gaps a mean stands for: exponential (memoryless) or all equal to it. */
const gapsOf = (meanUs: number, shape: 'exponential' | 'mean'): number[] =>
  shape === 'mean' ? [meanUs] : EXP_QUANTILES.map((q) => q * meanUs);

const avg = (gaps: readonly number[], f: (g: number) => number) =>
  gaps.reduce((s, g) => s + f(g), 0) / gaps.length;

/**
 * The busy time per second (us) over the CPUs observed, on the base of their busy shares (a share
 * of each CPU's time, which the per-CPU patterns are taken on too), not busySeconds over the
 * window: where a CPU's counters fall behind the clock the two part, and a ramp taken on one base
 * and the work on the other put 392% for 234%.
 */
const busyPerSecond = (o: WorkloadObservation): number => (o.busyShare ?? 0) * o.cpus * 1e6;

/**
 * One CPU's pattern over the window, per second: its wake-ups, its idle time, its busy time and
 * the bursts of work that end its idle gaps (the work's own bursts where the processes were read,
 * else its wake-ups). The clock ramps per core, and a mean over CPUs mixes a busy core's short gaps
 * with an idle core's long ones, so the ramp half is taken CPU by CPU.
 */
interface CpuPattern {
  /** Whether the bursts are the work's own (else wake-ups, blips included). */
  workBursts: boolean;
  /** Whether they are units of work counted out of longer busy periods (ObservedCpu.workInUnits). */
  inUnits: boolean;
  entriesPerSecond: number;
  idleUsPerSecond: number;
  busyUsPerSecond: number;
  /** The busy time in the bursts (burstBusy): all of it where the bursts' processes are not known. */
  burstBusyUsPerSecond: number;
  burstsPerSecond: number;
}

/**
 * The busy time (us per second) in a CPU's bursts of work: where the work's own bursts were counted
 * and the observation says how much of the busy time their processes ran, that time and the time
 * of processes that never slept (preempted, never waiting, they ran inside the busy periods: the
 * PostgreSQL check's busy filler, standing in for a slow clock's longer busy time, is one); not
 * other processes' short wake-ups, interrupts and kernel work, which are no part of a query's burst
 * (at 5 queries a second on the PostgreSQL check's CPU they were about half of its busy time,
 * and spread over the queries' bursts they made each 2.5 ms query's work 4-10 ms, on the loss
 * curve's steepest part). Else all of the CPU's busy time.
 */
const burstBusy = (c: WorkloadObservation['perCpu'][number], busyUs: number, withBursts: boolean): number =>
  withBursts && c.burstWorkShare !== null && c.burstWorkShare !== undefined
    ? busyUs * Math.min(1, c.burstWorkShare + (c.sleeplessWorkShare ?? 0))
    : busyUs;

/**
 * The CPUs listed one by one, and the rest (beyond the listed busiest) as one more pattern made of
 * what the totals leave; the totals alone when no CPU is listed. Work bursts count where the
 * observation has them (Linux, the processes read covering the work), else every wake-up is taken
 * to end a gap.
 */
const cpusOf = (o: WorkloadObservation): CpuPattern[] => {
  const withBursts = o.workBurstsPerSecond !== null && o.workBurstsPerSecond !== undefined;
  const totalEntries = o.idleEntriesPerSecond ?? 0;
  const totalBusy = busyPerSecond(o);
  const totalIdle = (o.meanIdlePeriodUs ?? 0) * totalEntries;
  const totalBursts = withBursts ? (o.workBurstsPerSecond ?? 0) : totalEntries;
  const listed = o.perCpu.flatMap((c) =>
    c.busyShare !== null && c.idleEntriesPerSecond && c.meanIdlePeriodUs !== null
      ? [
          {
            workBursts: withBursts,
            inUnits: withBursts && c.workInUnits === true,
            entriesPerSecond: c.idleEntriesPerSecond,
            idleUsPerSecond: c.meanIdlePeriodUs * c.idleEntriesPerSecond,
            busyUsPerSecond: c.busyShare * 1e6,
            burstBusyUsPerSecond: burstBusy(c, c.busyShare * 1e6, withBursts),
            burstsPerSecond: withBursts ? (c.workBurstsPerSecond ?? 0) : c.idleEntriesPerSecond,
          },
        ]
      : [],
  );
  if (!listed.length)
    return [
      {
        workBursts: withBursts,
        inUnits: false,
        entriesPerSecond: totalEntries,
        idleUsPerSecond: totalIdle,
        busyUsPerSecond: totalBusy,
        burstBusyUsPerSecond: totalBusy,
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
      inUnits: false,
      entriesPerSecond: rest.entriesPerSecond,
      idleUsPerSecond: Math.max(0, rest.cpus * 1e6 - rest.busyUsPerSecond),
      busyUsPerSecond: rest.busyUsPerSecond,
      burstBusyUsPerSecond: rest.busyUsPerSecond,
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

/** The work's own bursts that queue behind the one before are at most this share of them. */
const MAX_QUEUED = 0.95;

/**
 * The idle gaps before a CPU's bursts (idleGapsOf), each weighed by the share of its bursts. The
 * work's own bursts (a query each; not units, not wake-ups) arrive as requests do: Poisson
 * arrivals see time averages (Wolff, "Poisson arrivals see time averages", Operations Research
 * 30(2), 1982), so the share of them that find the CPU busy is its busy share, and those follow
 * the burst before with no idle gap a clock could fall in; the rest come after an idle period
 * that, arrivals being memoryless, has the arrivals' mean gap: the CPU's idle time over those
 * bursts alone. Taken over every burst the mean gap is too short: 2.5 ms queries at 200 a second,
 * half of them queued, gave 3.3-3.8 ms where the arrivals' gap is 5 ms, and the long gaps after
 * which a clock falls were lost from the exponential's tail. `queued` false: every burst after a
 * gap of the mean (the range's other end).
 */
const burstGaps = (
  c: CpuPattern,
  split: readonly { entriesPerSecond: number; meanPeriodUs: number }[],
  shape: 'exponential' | 'mean',
  queued: boolean,
): { gapUs: number; weight: number }[] => {
  const own = queued && c.workBursts && !c.inUnits;
  const time = c.busyUsPerSecond + c.idleUsPerSecond;
  const busy = own && time > 0 ? Math.min(MAX_QUEUED, c.busyUsPerSecond / time) : 0;
  const gaps = idleGapsOf(split, c.idleUsPerSecond / (c.burstsPerSecond * (1 - busy)), shape);
  return busy > 0
    ? [{ gapUs: 0, weight: busy }, ...gaps.map((g) => ({ gapUs: g.gapUs, weight: g.weight * (1 - busy) }))]
    : gaps;
};

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
  costs: PlanCosts,
  pick: Pick3,
  shape: 'exponential' | 'mean',
  floor?: { costs: PlanCosts; pick: Pick3 },
  queued = true,
): Totals => {
  // The work: the busy time less what is no part of the work's bursts (burstBusy).
  let busyPerSecondUs = busyPerSecond(o);
  const wake = wakeHalf(o, costs, pick, shape);
  let ramp = 0;
  let floorRamp = 0;
  let entries = 0;
  const split = statesOf(o).flatMap((s) =>
    s.meanPeriodUs ? [{ entriesPerSecond: s.entriesPerSecond, meanPeriodUs: s.meanPeriodUs }] : [],
  );
  for (const c of cpusOf(o)) {
    entries += c.entriesPerSecond;
    busyPerSecondUs -= c.busyUsPerSecond - c.burstBusyUsPerSecond;
    if (c.burstsPerSecond <= 0 || (!costs.ramp.length && !costs.stream?.length)) continue;
    const gaps = burstGaps(c, split, shape, queued);
    const busyUs = c.burstBusyUsPerSecond / c.burstsPerSecond;
    // Counted by wake-ups a burst's work is the busy time spread over blips too: it says nothing of
    // whether a burst finished the ramp, so each is taken to pay for its own gap.
    const carried = c.workBursts;
    const follow = c.inUnits ? 'units' : 'own';
    const work = workOf(burstModel(costs, gaps, pick, carried, follow), busyUs);
    ramp += c.burstsPerSecond * (busyUs - work);
    if (floor)
      floorRamp += c.burstsPerSecond * burstModel(floor.costs, gaps, floor.pick, carried, follow)(work);
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
 * The estimate: the middle from the middle costs with exponential idle periods, the work's own
 * bursts that found the CPU busy following the one before with no gap (burstGaps); the range from
 * the low and high costs, both shapes of the distribution (all periods equal to the mean, or
 * memoryless) and every burst after a gap, whichever is lower or higher. With a benchmark under a performance plan
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
  // The middle's shapes, every gap at its mean, and every burst after a gap (none queued).
  const shapes = [
    ['exponential', true],
    ['exponential', false],
    ['mean', true],
  ] as const;
  const range = (pick: Pick3, floorPick: Pick3) =>
    shapes.map(([gaps, queued]) => shares(totals(o, costs, pick, gaps, floor(floorPick), queued)).percent);
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
