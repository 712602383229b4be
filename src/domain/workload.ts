/**
 * What the plan costs the work that runs here: the idle pattern observed from the OS's own
 * counters (Linux cpuidle, /proc/stat and /proc/interrupts; Windows Processor Information) and the
 * estimate built on it. A public contract like `schemas.ts`: add fields, never rename them.
 * The raw counter snapshot the readers return is here too, as a plain type (it is no answer).
 */
import { z } from 'zod';

/** One idle state's counters on one CPU, as the OS counts them since boot. */
export interface StateCounters {
  name: string;
  /** Published worst-case exit latency (us); null where the OS publishes none. */
  exitLatencyUs: number | null;
  /** Entries into the state. */
  usage: number;
  /** Time spent in the state (us). */
  timeUs: number;
  /** Entries the governor judged too deep (idle shorter than the state's target residency); null where not counted. */
  above: number | null;
  /** Entries the governor judged too shallow (a deeper state would have fitted); null where not counted. */
  below: number | null;
  disabled: boolean;
}

/** One CPU's counters since boot. */
export interface CpuCounters {
  cpu: number;
  /** Busy time (us): all but idle and iowait; null when unknown. */
  busyUs: number | null;
  /** All time the CPU accounted (us); null when unknown. */
  totalUs: number | null;
  /** Idle time (us), from the busy-time source (used when no state counts its time). */
  idleUs: number | null;
  /** Idle states with their counters; empty when the kernel has no cpuidle driver. */
  states: StateCounters[];
  /**
   * Wake-ups counted another way when no idle state counts entries (interrupts taken on this CPU):
   * an upper bound of idle entries, since interrupts that arrive while busy count too.
   */
  wakeups: number | null;
}

/** One process's counters since it started (Linux procfs). */
export interface TaskCounters {
  pid: number;
  /** CPU time it ran (us). */
  runUs: number;
  /** Times it went to sleep of its own accord: each ends a burst of its work. */
  sleeps: number;
  /** The CPU it last ran on. */
  cpu: number;
  /** When it started (s since boot, the clock of `IdleSnapshot.atS`); absent where not known. */
  startS?: number;
}

export type CounterSource = 'cpuidle' | 'interrupts' | 'windows-counters';

/** One read of every counter: cheap (files, or one counter query), no timer, no wake-up. */
export interface IdleSnapshot {
  source: CounterSource;
  /**
   * Where wake-ups are interrupts: the scheduler ticks a busy CPU takes per second (the kernel's
   * HZ on a tickless-idle kernel), which are no wake-ups; null when the kernel's tick is not known.
   */
  busyTickHz?: number | null;
  /** The counters' own clock (s since boot), so deltas divide by the time the counters saw. */
  atS: number;
  cpus: CpuCounters[];
  /** Every watched process's counters (Linux); absent or null where none are read. */
  tasks?: TaskCounters[] | null;
}

/** Reads a snapshot; the one read per request or scrape. */
export type IdleCounterReader = () => Promise<IdleSnapshot>;

const share = z.number().min(0).max(1);

export const ObservedState = z
  .object({
    name: z
      .string()
      .describe('The idle state as the OS names it (POLL, C1, C6, `haltpoll idle`, C1/C2/C3 on Windows).'),
    share: share.describe('Share of the observed idle time spent in this state (0..1).'),
    entriesPerSecond: z.number().describe('Entries into this state per second, summed over CPUs.'),
    meanPeriodUs: z
      .number()
      .nullable()
      .describe('Mean time per entry (us): delta time / delta entries; null without entries.'),
    exitLatencyUs: z
      .number()
      .nullable()
      .describe('Published worst-case exit latency of the state (us); null where none is published.'),
    above: z
      .number()
      .nullable()
      .describe(
        'Entries in the window the governor judged too deep (idle shorter than the target residency); null where not counted.',
      ),
    below: z
      .number()
      .nullable()
      .describe('Entries in the window the governor judged too shallow; null where not counted.'),
  })
  .meta({ id: 'ObservedIdleState', description: 'One idle state over the observed window.' });
export type ObservedState = z.infer<typeof ObservedState>;

export const ObservedCpu = z
  .object({
    cpu: z.number().int().describe('The CPU number.'),
    busyShare: share.nullable().describe('Busy share of this CPU over the window (0..1); null when unknown.'),
    idleEntriesPerSecond: z
      .number()
      .nullable()
      .describe('Idle entries (or wake-ups) per second on this CPU.'),
    meanIdlePeriodUs: z.number().nullable().describe('Mean idle period on this CPU (us).'),
    workBurstsPerSecond: z
      .number()
      .nullable()
      .optional()
      .describe(
        "Bursts of work per second on this CPU: its processes' sleeps (those of processes of bursts of 1 ms or more where they do most of its work, else each counting at most its share of 1 ms of CPU), at most the CPU's wake-ups; null where processes are not read.",
      ),
    workInUnits: z
      .boolean()
      .optional()
      .describe(
        "True where this CPU's work is counted in 1 ms units: no processes of bursts of 1 ms or more did most of it (work handed between processes in shorter turns, a client feeding a server), so the units are pieces of longer busy periods, and the estimate takes a unit after a gap too short for the clock to fall to go on with the ramp the unit before was on. Absent where processes are not read.",
      ),
    burstWorkShare: share
      .nullable()
      .optional()
      .describe(
        "Share of this CPU's busy time (0..1) run by the processes whose sleeps are its bursts of work (workBurstsPerSecond); the rest is other processes' short wake-ups, processes that never slept, interrupts and kernel work. Absent where processes are not read.",
      ),
    sleeplessWorkShare: share
      .nullable()
      .optional()
      .describe(
        "Share of this CPU's busy time (0..1) run by processes that did not sleep in the window (batch work, spinners: preempted, never waiting). Absent where processes are not read.",
      ),
  })
  .meta({ id: 'ObservedCpu', description: 'One CPU over the observed window.' });
export type ObservedCpu = z.infer<typeof ObservedCpu>;

/** At most this many CPUs are listed one by one (the busiest first); the totals cover all. */
export const PER_CPU_LIMIT = 16;

export const WorkloadObservation = z
  .object({
    source: z
      .enum(['cpuidle', 'interrupts', 'windows-counters'])
      .describe(
        "Where the idle entries come from: Linux cpuidle state counters, the interrupts each CPU took (Linux without a cpuidle driver: less the scheduler ticks of its busy time where the kernel's tick rate is known, else an upper bound), or the Windows Processor Information counters.",
      ),
    since: z
      .enum(['window', 'previous-read', 'boot'])
      .describe(
        'What the deltas are taken against: the start of the asked window, the previous read, or boot (the first read).',
      ),
    windowSeconds: z.number().describe('Seconds the counters covered.'),
    cpus: z.number().int().describe('CPUs observed.'),
    cpuSet: z
      .string()
      .optional()
      .describe(
        'The CPUs observed, as a CPU list (`0-3,8`), when some were asked for; everything else here covers only them. Absent when every CPU was observed.',
      ),
    busyShare: share
      .nullable()
      .describe('Share of CPU time spent busy over all CPUs (0..1); null when unknown.'),
    busySeconds: z.number().nullable().describe('CPU seconds of work observed, summed over CPUs.'),
    idleEntriesPerSecond: z
      .number()
      .nullable()
      .describe('Idle entries (wake-ups) per second, summed over CPUs.'),
    meanIdlePeriodUs: z.number().nullable().describe('Mean idle period (us): idle time / idle entries.'),
    meanBusyPeriodUs: z
      .number()
      .nullable()
      .describe('Mean busy period between wake-ups (us): busy time / idle entries.'),
    workBurstsPerSecond: z
      .number()
      .nullable()
      .optional()
      .describe(
        "Bursts of work per second, summed over CPUs: the times the processes that ran went to sleep of their own accord, per CPU at most its wake-ups; where processes of bursts of 1 ms or more do most of a CPU's work only theirs count, else a burst shorter than 1 ms of CPU counts as its share of one. Wake-ups that carry no work end no burst. Null where processes are not read (Windows) or they cover less than a third of the busy time.",
      ),
    workCoveredShare: share
      .nullable()
      .optional()
      .describe('Share of the busy time the processes read account for (0..1); null where none are read.'),
    states: z
      .array(ObservedState)
      .describe('The idle states, shallowest first; empty without per-state counters.'),
    perCpu: z.array(ObservedCpu).describe(`The busiest CPUs, at most ${PER_CPU_LIMIT}.`),
    perCpuTruncated: z
      .boolean()
      .describe(`True when more than ${PER_CPU_LIMIT} CPUs were observed and only the busiest are listed.`),
  })
  .meta({
    id: 'WorkloadObservation',
    description: "The idle pattern of this server's work over the window, from the OS's counters.",
  });
export type WorkloadObservation = z.infer<typeof WorkloadObservation>;

export const WorkloadEstimate = z
  .object({
    addedPercent: z
      .number()
      .describe(
        'By how much the plan in force lengthens the CPU work observed (%): the work in the bursts of the processes read where they are (their CPU time, with that of processes that never slept), else all the busy time.',
      ),
    low: z
      .number()
      .describe(
        'Low end of the range (%), from the uncertainty of the costs and of the idle-period distribution.',
      ),
    high: z.number().describe('High end of the range (%).'),
    addedUsPerWakeup: z
      .number()
      .describe('Added time per wake-up (us): the wake-up cost plus the clock ramp-up it sets off.'),
    wakeUpPercent: z.number().describe('The part of addedPercent from waking idle cores (idle-state exit).'),
    rampPercent: z.number().describe('The part of addedPercent from the clock ramping up after idle.'),
    basis: z
      .enum(['benchmark', 'published-latencies'])
      .describe(
        'The costs used: a benchmark run under the plan in force, or (without one) the published exit latencies of the states in use, which cover the wake-up half only.',
      ),
    benchmarkId: z.string().optional().describe('The benchmark whose costs were used.'),
    platformPercent: z
      .number()
      .optional()
      .describe(
        "What the same work loses to the clock under a performance plan (% of the work observed): the platform's (a hypervisor's host, the firmware), which no plan here removes, so it is left out of addedPercent; from a benchmark under a performance plan, absent without one (addedPercent then holds it).",
      ),
    recoverablePercent: z
      .number()
      .optional()
      .describe(
        'What a performance plan would recover (% of the work observed), from a benchmark under a performance plan; absent without one.',
      ),
    recoverableFrom: z
      .string()
      .optional()
      .describe('The benchmark under a performance plan that recoverablePercent rests on.'),
  })
  .meta({
    id: 'WorkloadEstimate',
    description: 'What the plan in force costs the observed work, with a range.',
  });
export type WorkloadEstimate = z.infer<typeof WorkloadEstimate>;

export const WorkloadCost = z
  .object({
    observation: WorkloadObservation,
    estimate: WorkloadEstimate.nullable().describe('Null when no estimate can be made; `reason` says why.'),
    reason: z
      .string()
      .nullable()
      .describe('Why there is no estimate (e.g. "too little work observed to estimate"); null with one.'),
    plan: z.string().nullable().describe('The plan in force (name), when known.'),
    summary: z
      .string()
      .describe('One sentence: "at this server\'s load over the last N s the plan adds ~X% (Y-Z%)".'),
  })
  .meta({
    id: 'WorkloadCost',
    description: "What the power plan costs this server's work, observed live and estimated with a range.",
  });
export type WorkloadCost = z.infer<typeof WorkloadCost>;

export const TOO_LITTLE_WORK = 'too little work observed to estimate';
