/**
 * The observation between two reads of the idle counters: deltas per CPU and per state, divided
 * by the time the counters' own clock saw. Pure; the readers in linux/ and windows/ give the
 * snapshots. A CPU that appeared, vanished or whose counters went back (hot-plug, a counter reset)
 * is left out of that window rather than read as a huge or negative number. Asked for some CPUs
 * only (a database's cpuset), the deltas are of those: the snapshots stay whole, since a consumer's
 * previous read serves its next whatever CPUs that one asks for.
 */
import { formatCpuList } from '../domain/cpu-list.ts';
import {
  type CpuCounters,
  type IdleSnapshot,
  type ObservedCpu,
  type ObservedState,
  PER_CPU_LIMIT,
  type StateCounters,
  type WorkloadObservation,
} from '../domain/workload.ts';

const d = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a == null || b == null ? null : a - b;

const round = (n: number, digits = 1) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

interface CpuDelta {
  cpu: number;
  busyUs: number | null;
  totalUs: number | null;
  idleUs: number | null;
  entries: number | null;
  /** The states' counters over the window. */
  states: Omit<StateCounters, 'disabled'>[];
}

const zero = (c: CpuCounters): CpuCounters => ({
  ...c,
  busyUs: c.busyUs === null ? null : 0,
  totalUs: c.totalUs === null ? null : 0,
  idleUs: c.idleUs === null ? null : 0,
  wakeups: c.wakeups === null ? null : 0,
  states: c.states.map((s) => ({
    ...s,
    usage: 0,
    timeUs: 0,
    above: s.above === null ? null : 0,
    below: s.below === null ? null : 0,
  })),
});

/**
 * Wake-ups from interrupts: all a CPU took, less the ticks of its busy time (a tickless-idle
 * kernel stops the tick only while idle), when the tick rate is known.
 */
const wakeupsOf = (cur: CpuCounters, prev: CpuCounters, busyTickHz: number | null): number | null => {
  const irqs = d(cur.wakeups, prev.wakeups);
  const busy = d(cur.busyUs, prev.busyUs);
  if (irqs === null || irqs < 0 || !busyTickHz || busy === null || busy < 0) return irqs;
  return Math.max(0, Math.round(irqs - (busyTickHz * busy) / 1e6));
};

const cpuDelta = (cur: CpuCounters, prev: CpuCounters, busyTickHz: number | null): CpuDelta | null => {
  const states = cur.states.flatMap((s) => {
    const p = prev.states.find((x) => x.name === s.name);
    return p
      ? [
          {
            name: s.name,
            exitLatencyUs: s.exitLatencyUs,
            usage: s.usage - p.usage,
            timeUs: s.timeUs - p.timeUs,
            above: d(s.above, p.above),
            below: d(s.below, p.below),
          },
        ]
      : [];
  });
  const delta: CpuDelta = {
    cpu: cur.cpu,
    busyUs: d(cur.busyUs, prev.busyUs),
    totalUs: d(cur.totalUs, prev.totalUs),
    idleUs: d(cur.idleUs, prev.idleUs),
    entries: cur.states.length ? states.reduce((n, s) => n + s.usage, 0) : wakeupsOf(cur, prev, busyTickHz),
    states,
  };
  const negative = [
    delta.busyUs,
    delta.totalUs,
    delta.idleUs,
    delta.entries,
    ...states.flatMap((s) => [s.usage, s.timeUs]),
  ].some((x) => x !== null && x < 0);
  return negative ? null : delta;
};

/** A burst of less CPU than this counts as its share of one: a clock answers to work, not to a blip. */
export const WORK_UNIT_US = 1000;
/**
 * Below this share of the busy time accounted for by the processes read, their bursts are not used
 * (most of the work runs in threads not read). Not half: the busy time also holds interrupts and
 * kernel work no process accounts for (on the PostgreSQL check's workload CPU under its emulated
 * plans, 20-30% of it; the processes read covered 0.44-0.98 of the busy time there).
 */
export const MIN_WORK_COVERAGE = 1 / 3;

/** A CPU's bursts of work in the window, and whether they are counted in units of WORK_UNIT_US. */
interface CpuBursts {
  bursts: number;
  inUnits: boolean;
  /** CPU time (us) of the processes whose sleeps are the bursts, and of those that never slept. */
  burstRunUs: number;
  sleeplessRunUs: number;
}

/**
 * The processes' bursts of work in the window, per CPU they last ran on, and the CPU time they
 * ran in all. Each voluntary sleep ends a burst. Where processes whose bursts average at least
 * WORK_UNIT_US do most of a CPU's work (a database's backends answering queries of milliseconds),
 * only their bursts count: the blips of the rest (a client sending a query, a timer, a background
 * writer waking for 100 us) ride along in the busy time and end no idle gap for a clock, and
 * counted as bursts they would cut the gaps and the work per burst the model sees (a 10 ms query
 * at 5 a second came to 7-12 bursts a second). Otherwise (work made of short requests only) each
 * process counts its CPU time in units of WORK_UNIT_US where its bursts are shorter. "Most" is
 * of the work of the processes that went to sleep at all: one that only ran (a batch job, a
 * spinner, preempted but never waiting) ends no gap either way. A process new since the last read, or a pid reused, did
 * all of its counting in the window; one that only began to be watched, though it started before
 * the last read, is left out, and so is one that last ran on a CPU not observed. Null when either
 * read has no process counters.
 */
const taskBursts = (
  prev: IdleSnapshot | null,
  cur: IdleSnapshot,
  only: ReadonlySet<number> | null,
): { perCpu: Map<number, CpuBursts>; runUs: number } | null => {
  if (!cur.tasks || (prev && !prev.tasks)) return null;
  const before = new Map((prev?.tasks ?? []).map((t) => [t.pid, t]));
  const perCpu = new Map<number, CpuBursts>();
  /**
   * Per CPU: the work and sleeps of processes of long bursts, the work of all that slept, the units
   * and the work of those that never slept.
   */
  const sums = new Map<
    number,
    { longRun: number; longSleeps: number; allRun: number; units: number; sleepless: number }
  >();
  let runUs = 0;
  for (const t of cur.tasks) {
    if (only && !only.has(t.cpu)) continue;
    const p = before.get(t.pid);
    // Not in the previous read though it started before it (it took the place of a newer process
    // that ended, or another consumer's read began watching it): its counts span more than the
    // window, so it sits this one out.
    if (!p && prev && t.startS !== undefined && t.startS < prev.atS) continue;
    const same = p !== undefined && t.runUs >= p.runUs && t.sleeps >= p.sleeps;
    const run = same ? t.runUs - p.runUs : t.runUs;
    const sleeps = same ? t.sleeps - p.sleeps : t.sleeps;
    if (run <= 0) continue;
    runUs += run;
    const c = sums.get(t.cpu) ?? { longRun: 0, longSleeps: 0, allRun: 0, units: 0, sleepless: 0 };
    // A process that never went to sleep in the window (a batch job, a spinner: preempted, never
    // waiting) ended no idle gap and has no bursts to weigh: its work is no side of the choice.
    if (sleeps > 0) c.allRun += run;
    else c.sleepless += run;
    c.units += Math.min(sleeps, run / WORK_UNIT_US);
    if (sleeps > 0 && run / sleeps >= WORK_UNIT_US) {
      c.longRun += run;
      c.longSleeps += sleeps;
    }
    sums.set(t.cpu, c);
  }
  for (const [cpu, c] of sums)
    perCpu.set(
      cpu,
      c.longRun >= c.allRun / 2
        ? { bursts: c.longSleeps, inUnits: false, burstRunUs: c.longRun, sleeplessRunUs: c.sleepless }
        : { bursts: c.units, inUnits: true, burstRunUs: c.allRun, sleeplessRunUs: c.sleepless },
    );
  return { perCpu, runUs };
};

/**
 * How a CPU's bursts were counted (workInUnits) and the shares of its busy time run by the
 * processes whose sleeps are the bursts and by processes that never slept; the rest is other
 * processes' blips, interrupts and kernel work.
 */
const workOfBursts = (b: CpuBursts | undefined, busyUs: number | null) => {
  const shareOf = (us: number | undefined) =>
    busyUs && us !== undefined ? round(Math.min(us / busyUs, 1), 4) : busyUs ? 0 : null;
  return {
    workInUnits: b?.inUnits ?? false,
    burstWorkShare: shareOf(b?.burstRunUs),
    sleeplessWorkShare: shareOf(b?.sleeplessRunUs),
  };
};

const sum = (xs: (number | null)[]): number | null =>
  xs.some((x) => x !== null) ? xs.reduce<number>((s, x) => s + (x ?? 0), 0) : null;

/** The idle time of one CPU in the window: what its states counted, else what /proc/stat says. */
const idleOf = (c: CpuDelta): number | null =>
  c.states.length ? c.states.reduce((n, s) => n + s.timeUs, 0) : c.idleUs;

/**
 * A CPU's time in the window, the base of its busy share: its busy and stolen time as /proc/stat
 * counts them, and its idle time as its idle states counted it where they did. /proc/stat's idle
 * can fall behind: on the PostgreSQL check's workload CPU under the emulated ramps it counted
 * 75-93% of the window's time in all (its idle short by up to 1.6 s in 13 s), while its busy time
 * and the idle states' time made the window to the hundredth of a second; a share of that short
 * total put 13.8% busy for 12.1%.
 */
const timeOf = (c: CpuDelta): number | null =>
  c.totalUs === null ? null : c.totalUs - (c.idleUs ?? 0) + (idleOf(c) ?? c.idleUs ?? 0);

/**
 * The observation from `prev` to `cur`; with `cpus`, of those CPUs only (their idle entries, states,
 * busy time and the bursts of the processes that last ran on them), and `cpuSet` says which were
 * observed.
 */
export const observe = (
  prev: IdleSnapshot | null,
  cur: IdleSnapshot,
  since: WorkloadObservation['since'],
  cpus?: readonly number[],
): WorkloadObservation => {
  const windowS = Math.max(prev ? cur.atS - prev.atS : cur.atS, 0);
  const only = cpus ? new Set(cpus) : null;
  const deltas = cur.cpus.flatMap((c) => {
    if (only && !only.has(c.cpu)) return [];
    const p = prev ? prev.cpus.find((x) => x.cpu === c.cpu) : zero(c);
    const delta = p ? cpuDelta(c, p, cur.source === 'interrupts' ? (cur.busyTickHz ?? null) : null) : null;
    return delta ? [delta] : [];
  });
  const busy = sum(deltas.map((c) => c.busyUs));
  const times = deltas.map(timeOf);
  const total = sum(times);
  const entries = sum(deltas.map((c) => c.entries));
  const idle = sum(deltas.map(idleOf));
  const perSecond = (n: number | null) => (n === null || windowS <= 0 ? null : round(n / windowS));
  const tasks = taskBursts(prev, cur, only);
  const covered = tasks && busy ? round(Math.min(tasks.runUs / busy, 1), 4) : null;
  // A CPU's bursts of work are at most its wake-ups: processes taking turns within one busy period
  // each sleep once.
  const counted = tasks && covered !== null && covered >= MIN_WORK_COVERAGE;
  const burstsOf = (c: CpuDelta): number | null =>
    counted ? Math.min(tasks.perCpu.get(c.cpu)?.bursts ?? 0, c.entries ?? Number.POSITIVE_INFINITY) : null;
  const mean = (t: number | null, n: number | null) => (t === null || !n ? null : round(t / n));
  const stateNames = deltas.find((c) => c.states.length)?.states ?? [];
  const idleStatesTime = sum(deltas.flatMap((c) => c.states.map((s) => s.timeUs))) ?? 0;
  const states: ObservedState[] = stateNames.map((first) => {
    const same = deltas.flatMap((c) => c.states.filter((s) => s.name === first.name));
    const usage = same.reduce((n, s) => n + s.usage, 0);
    const time = same.reduce((n, s) => n + s.timeUs, 0);
    return {
      name: first.name,
      share: idleStatesTime > 0 ? round(time / idleStatesTime, 4) : 0,
      entriesPerSecond: perSecond(usage) ?? 0,
      meanPeriodUs: mean(time, usage),
      exitLatencyUs: first.exitLatencyUs,
      above: sum(same.map((s) => s.above)),
      below: sum(same.map((s) => s.below)),
    };
  });
  const perCpu: ObservedCpu[] = deltas
    .map((c, i) => ({ c, time: times[i] }))
    .map(({ c, time }) => ({
      cpu: c.cpu,
      busyShare: c.busyUs !== null && time ? round(Math.min(c.busyUs / time, 1), 4) : null,
      idleEntriesPerSecond: perSecond(c.entries),
      meanIdlePeriodUs: mean(idleOf(c), c.entries),
      workBurstsPerSecond: perSecond(burstsOf(c)),
      ...(counted ? workOfBursts(tasks.perCpu.get(c.cpu), c.busyUs) : {}),
    }))
    .sort((a, b) => (b.busyShare ?? 0) - (a.busyShare ?? 0) || a.cpu - b.cpu);
  return {
    source: cur.source,
    since,
    windowSeconds: round(windowS, 2),
    cpus: deltas.length,
    ...(only ? { cpuSet: formatCpuList(deltas.map((c) => c.cpu)) } : {}),
    busyShare: busy !== null && total ? round(Math.min(busy / total, 1), 4) : null,
    busySeconds: busy === null ? null : round(busy / 1e6, 3),
    idleEntriesPerSecond: perSecond(entries),
    meanIdlePeriodUs: mean(idle, entries),
    meanBusyPeriodUs: mean(busy, entries),
    workBurstsPerSecond: perSecond(sum(deltas.map(burstsOf))),
    workCoveredShare: covered,
    states,
    perCpu: perCpu.slice(0, PER_CPU_LIMIT),
    perCpuTruncated: perCpu.length > PER_CPU_LIMIT,
  };
};
