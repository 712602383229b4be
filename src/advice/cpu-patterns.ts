/**
 * The workload model's view of each CPU over the window: its pattern per second (wake-ups, idle
 * and busy time, the busy time in its bursts of work, the bursts), and the idle gaps before its
 * bursts as the model takes them (exponential or at their mean; split as the idle states split
 * them; the work's own bursts that queued following the one before with no gap). Pure functions
 * over an observation; the workload model (workload-cost.ts) uses them.
 */
import type { WorkloadObservation } from '../domain/workload.ts';

/** Gaps at the midpoints of K equal-probability slices of an exponential distribution with mean 1. */
const K = 32;
const EXP_QUANTILES = Array.from({ length: K }, (_, k) => -Math.log(1 - (k + 0.5) / K));

/** The idle gaps a mean stands for: exponential (memoryless) or all equal to it. */
export const gapsOf = (meanUs: number, shape: 'exponential' | 'mean'): number[] =>
  shape === 'mean' ? [meanUs] : EXP_QUANTILES.map((q) => q * meanUs);

/**
 * The busy time per second (us) over the CPUs observed, on the base of their busy shares (a share
 * of each CPU's time, which the per-CPU patterns are taken on too), not busySeconds over the
 * window: where a CPU's counters fall behind the clock the two part, and a ramp taken on one base
 * and the work on the other put 392% for 234%.
 */
export const busyPerSecond = (o: WorkloadObservation): number => (o.busyShare ?? 0) * o.cpus * 1e6;

/**
 * One CPU's pattern over the window, per second: its wake-ups, its idle time, its busy time and
 * the bursts of work that end its idle gaps (the work's own bursts where the processes were read,
 * else its wake-ups). The clock ramps per core, and a mean over CPUs mixes a busy core's short gaps
 * with an idle core's long ones, so the ramp half is taken CPU by CPU.
 */
export interface CpuPattern {
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
export const cpusOf = (o: WorkloadObservation): CpuPattern[] => {
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
 * The share of the requests that queued behind another taken to wake the work all the same: the
 * middle estimate's, half (the middle of what the counters allow); the range's ends take all of
 * them and none (burstGaps).
 */
export const QUEUED_WAKE_MIDDLE = 0.5;

/**
 * The idle gaps before a CPU's bursts (idleGapsOf), each weighed by the share of its bursts. The
 * work's own bursts (a query each; not units, not wake-ups) arrive as requests do: Poisson
 * arrivals see time averages (Wolff, "Poisson arrivals see time averages", Operations Research
 * 30(2), 1982), so a share of the requests equal to the CPU's busy share `b` find it busy and
 * follow the one before with no idle gap a clock could fall in; the rest come after an idle period
 * that, arrivals being memoryless, has the arrivals' mean gap. The bursts counted are the work's
 * wake-ups, though: those after a gap, and of the queued requests the share `queuedWake` that found
 * the process asleep (a client that sends its next request only when the last returns: the process
 * sleeps for the turnaround unless the request comes before it looks). At `r` requests a second
 * the counters see `k = r (1 - b + queuedWake b)` bursts, of which the share `queued` = `queuedWake
 * b / (1 - b + queuedWake b)` (queuedShare) follow the one before with no gap, and the idle time
 * over the rest is the arrivals' mean gap. The counters do not say `queuedWake`: 1 takes every request as a burst, 0
 * none that queued, and the mean gap moves linearly between the two (QUEUED_WAKE_MIDDLE). Where
 * the clock falls only after long gaps, the exponential's tail decides: for 2.5 ms queries at 200
 * a second (the arrivals' mean gap 5 ms, about 120 wake-ups a second) every queued one counted
 * gave 6.9-9.0 ms and about twice the falls there were, none 1.0-2.5 ms, half 4.0-5.2 ms
 * (docs/ADVICE.md, "Queries that queue").
 */
export const burstGaps = (
  c: CpuPattern,
  split: readonly { entriesPerSecond: number; meanPeriodUs: number }[],
  shape: 'exponential' | 'mean',
  queued: number,
): { gapUs: number; weight: number }[] => {
  const gaps = idleGapsOf(split, c.idleUsPerSecond / (c.burstsPerSecond * (1 - queued)), shape);
  return queued > 0
    ? [
        { gapUs: 0, weight: queued },
        ...gaps.map((g) => ({ gapUs: g.gapUs, weight: g.weight * (1 - queued) })),
      ]
    : gaps;
};

/**
 * The share of a CPU's bursts that follow the one before with no gap (burstGaps), with the share
 * `queuedWake` of the requests that queued counted among them: none where the bursts are not the
 * work's own requests.
 */
export const queuedShare = (c: CpuPattern, queuedWake: number): number => {
  const own = c.workBursts && !c.inUnits;
  const time = c.busyUsPerSecond + c.idleUsPerSecond;
  const busy = own && time > 0 ? Math.min(MAX_QUEUED, c.busyUsPerSecond / time) : 0;
  return busy > 0 ? (queuedWake * busy) / (1 - busy + queuedWake * busy) : 0;
};
