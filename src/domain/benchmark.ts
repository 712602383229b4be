/**
 * The shapes of the CPU benchmark: its input options, one result (phases with figures and units,
 * the environment it ran in, warnings) and the summary used by listings. A public contract like
 * `schemas.ts`: add fields, never rename them.
 */
import { z } from 'zod';
import { ActivePlan, BackendName, Virtualization } from './schemas.ts';

export const benchmarkProfiles = ['quick', 'standard'] as const;
export const BenchmarkProfile = z.enum(benchmarkProfiles).meta({
  id: 'BenchmarkProfile',
  description:
    'How long and how thorough: `quick` (a few seconds, 3 idle gaps, 2 repetitions) or `standard` (up to ~20 s, 6 idle gaps, 3 repetitions).',
});
export type BenchmarkProfile = z.infer<typeof BenchmarkProfile>;

/** Benchmark ids are made by the service: `bm-YYYYMMDD-HHMMSS-xxxxxx` (UTC, 6 hex digits). */
export const benchmarkIdPattern = /^bm-\d{8}-\d{6}-[0-9a-f]{6}$/;
export const BenchmarkId = z
  .string()
  .regex(benchmarkIdPattern, 'must look like bm-20250101-120000-a1b2c3')
  .describe(
    'Benchmark result id, as returned by run_cpu_benchmark or list_benchmarks (bm-YYYYMMDD-HHMMSS-xxxxxx).',
  );

export const Stats = z
  .object({
    unit: z
      .string()
      .describe('Unit of every figure in this object except `n` and `cv`, e.g. ms, ratio, Mops/s.'),
    n: z.number().int().describe('Number of samples.'),
    min: z.number().describe('Smallest sample.'),
    p10: z.number().describe('10th percentile (linear interpolation).'),
    median: z.number().describe('Median.'),
    p90: z.number().describe('90th percentile (linear interpolation).'),
    max: z.number().describe('Largest sample.'),
    cv: z
      .number()
      .describe('Coefficient of variation: standard deviation / mean (0 = no spread; 0.1 = 10%).'),
  })
  .meta({ id: 'BenchmarkStats', description: 'Distribution of one measured quantity over its samples.' });
export type Stats = z.infer<typeof Stats>;

export const Figure = z
  .object({
    value: z.number().describe('The value.'),
    unit: z.string().describe('Its unit, e.g. ms, Mops/s, %, ratio.'),
  })
  .meta({ id: 'BenchmarkFigure', description: 'One number with its unit.' });
export type Figure = z.infer<typeof Figure>;

const noisy = z
  .boolean()
  .describe('True when the spread of this phase is too wide to trust; advice must not rest on it.');

export const CalibrationPhase = z
  .object({
    unitIterations: z
      .number()
      .int()
      .describe('Kernel iterations in one work unit, sized to take about 1 ms on the warm core of this run.'),
    unitMs: Figure.describe('Measured time of one unit on the warm core (target 1 ms).'),
    checksum: z
      .number()
      .int()
      .describe('Checksum of the kernel output, returned so the work cannot be optimised away.'),
  })
  .meta({ id: 'BenchmarkCalibration', description: 'Sizing of the fixed unit of work.' });

export const WarmBaselinePhase = z
  .object({
    spinMs: Figure.describe('Busy time spent first to bring the clock up.'),
    burstUnits: z.number().int().describe('Units per burst (the same burst is timed after each idle gap).'),
    burstMs: Stats.describe('Time of one burst of `burstUnits` units on the warm core.'),
    unitMs: Stats.describe('Time of one unit on the warm core (all units of all warm bursts).'),
    noisy,
  })
  .meta({
    id: 'BenchmarkWarmBaseline',
    description:
      'The best this core does now: bursts timed back to back after a warm-up spin, in slices across the run (before each run of the idle ladder and after the request stream).',
  });

export const LossPoint = z
  .object({
    units: z.number().int().describe('Units of work done from the start of the burst.'),
    lossMs: z
      .number()
      .describe('Median over the bursts of their time for those units minus as many warm units (ms).'),
    spreadMs: z.number().describe('p90 minus p10 of the same over the bursts (ms).'),
    meanLossMs: z
      .number()
      .optional()
      .describe(
        'Mean over the bursts of the same (ms): the loss to expect, where a median of a few bursts that each lose all or nothing reads one or the other (absent in results of earlier versions).',
      ),
    sdLossMs: z.number().optional().describe('Standard deviation of the same over the bursts (ms).'),
  })
  .meta({ id: 'BenchmarkLossPoint', description: 'Time lost after an idle gap by a point of the burst.' });

export const StreamPoint = z
  .object({
    idleGapMs: z.number().int().describe('The idle gap before each request (ms).'),
    units: z.number().int().describe('Units of work per request.'),
    n: z.number().int().describe('Requests timed (the first of the stream is not).'),
    meanLossMs: z.number().describe('Mean time a request took beyond as many warm units (ms).'),
    sdLossMs: z.number().describe('Standard deviation of that (ms).'),
    medianLossMs: z.number().describe('Median of that (ms).'),
  })
  .meta({
    id: 'BenchmarkStreamPoint',
    description:
      'Short requests one after another after the same idle gap: what each lost against a warm core, as a stream of queries does.',
  });

export const IdleGapPhase = z
  .object({
    idleGapMs: z
      .number()
      .int()
      .describe('How long the worker slept, truly idle (no timers, no spinning), before the burst.'),
    burstMs: Stats.describe('Time of the burst after this idle gap.'),
    penalty: Stats.describe(
      'Burst time after the gap divided by the warm burst median (unit: ratio; 1 = no penalty, 1.3 = 30% slower).',
    ),
    penaltyPercent: Figure.describe(
      '(median penalty - 1) x 100: how much slower the burst ran than on a warm core.',
    ),
    firstUnitPenalty: Stats.describe(
      'Time of the first unit after the gap divided by the warm unit median (ratio): what a very short request feels.',
    ),
    rampUpMs: Stats.describe(
      'Time from the start of the burst until the unit time settled within 10% of the warm unit median (ms); 0 when it never was slower.',
    ),
    unsettled: z
      .number()
      .int()
      .describe(
        'Bursts in which the unit time never settled within 10% of warm; their ramp-up counts as the whole burst.',
      ),
    lossCurve: z
      .array(LossPoint)
      .optional()
      .describe(
        "The time lost by the time the burst's first units were done, at 1, 2, 3, 5, 8, 13, 20, 30 and 60 units and at the whole burst: what a piece of work of any length loses after this gap, whatever the ramp's shape (absent in results of earlier versions).",
      ),
    noisy,
  })
  .meta({ id: 'BenchmarkIdleGap', description: 'Bursts timed after one idle gap of the ladder.' });

export const SustainedSinglePhase = z
  .object({
    durationMs: Figure.describe('How long the single thread ran.'),
    throughput: Figure.describe(
      'Kernel operations per second on one thread (Mops/s; comparable across runs and machines).',
    ),
    unitsPerSecond: Figure.describe("The same throughput in this run's calibrated units per second."),
    slices: Stats.describe(
      'Throughput in each time slice of the run (Mops/s); its cv shows how steady it was.',
    ),
    noisy,
  })
  .meta({ id: 'BenchmarkSustainedSingle', description: 'Sustained throughput of one thread.' });

export const SustainedAllCorePhase = z
  .object({
    threads: z.number().int().describe('Worker threads run at the same time.'),
    durationMs: Figure.describe('How long the threads ran.'),
    throughput: Figure.describe('Total kernel operations per second over all threads (Mops/s).'),
    perThread: Stats.describe('Throughput of each thread (Mops/s).'),
    speedup: Figure.describe('Total throughput / sustained single-thread throughput (ratio).'),
    scalingEfficiency: Figure.describe('speedup / threads (ratio; 1 = perfect scaling).'),
    noisy,
  })
  .meta({ id: 'BenchmarkSustainedAllCore', description: 'Sustained throughput of all threads at once.' });

export const Percentiles = z
  .object({
    unit: z.string().describe('Unit of p50, p99 and max, e.g. us or ratio.'),
    n: z.number().int().describe('Number of samples.'),
    p50: z.number().describe('Median.'),
    p99: z.number().describe('99th percentile (linear interpolation): the slow tail a busy server feels.'),
    max: z.number().describe('Largest sample.'),
  })
  .meta({ id: 'BenchmarkPercentiles', description: 'Median, tail and worst case of one measured quantity.' });
export type Percentiles = z.infer<typeof Percentiles>;

export const WakeGapPhase = z
  .object({
    gapUs: z.number().int().describe('How long the thread slept in the kernel before waking (us).'),
    overshootUs: Percentiles.describe(
      'Timer overshoot: how much later than asked the sleeping thread ran again (us); idle-state exit latency, timer slack and scheduling show here.',
    ),
    firstUnitUs: Percentiles.describe('Time of the first small unit of work after waking (us).'),
    firstUnitSlowdown: Percentiles.describe(
      'That time divided by the warm median of the same unit (ratio; 1 = as fast as warm): cold caches and a lowered clock.',
    ),
    costUs: Percentiles.describe(
      'What one request pays after this gap: overshoot plus the extra time of the first unit over warm (us).',
    ),
  })
  .meta({ id: 'BenchmarkWakeGap', description: 'The wake-up probe after one idle gap.' });

export const WakeUpPhase = z
  .object({
    unitUs: Figure.describe('Warm median of the small unit the probe times after each wake-up (us).'),
    rounds: z.number().int().describe('Samples per gap (the gaps are interleaved round by round).'),
    gaps: z.array(WakeGapPhase).describe('One entry per idle gap, shortest first (0.1 to 10 ms).'),
  })
  .meta({
    id: 'BenchmarkWakeUp',
    description:
      'The other half of what a plan costs: how late a sleeping thread wakes and how slow its first work runs, after gaps of 0.1-10 ms (idle states, not the clock ramp).',
  });
export type WakeUpPhase = z.infer<typeof WakeUpPhase>;

export const BenchmarkPhases = z
  .object({
    calibration: CalibrationPhase,
    warmBaseline: WarmBaselinePhase,
    burstsAfterIdle: z.array(IdleGapPhase).describe('One entry per idle gap, shortest first.'),
    requestStream: z
      .array(StreamPoint)
      .optional()
      .describe(
        'The request stream: per size and gap, requests of a few units one after another after that gap, the clock in the state short requests leave it in (absent in results of earlier versions).',
      ),
    wakeUp: WakeUpPhase.optional().describe('The wake-up probe (absent in results of earlier versions).'),
    sustainedSingle: SustainedSinglePhase,
    sustainedAllCore: SustainedAllCorePhase,
  })
  .meta({ id: 'BenchmarkPhases', description: 'The figures of each phase, in the order they ran.' });
export type BenchmarkPhases = z.infer<typeof BenchmarkPhases>;

export const BenchmarkEnvironment = z
  .object({
    activePlan: ActivePlan.nullable().describe(
      'The plan in force during the run and its processor settings; null if unreadable.',
    ),
    backend: BackendName,
    virtualization: Virtualization.nullable().describe('Virtual machine or container, when known.'),
    os: z.string().describe('Operating system family and release.'),
    cpu: z
      .object({
        model: z.string().describe('CPU model as the OS reports it.'),
        logicalCpus: z.number().int().describe('Logical CPUs available to this process.'),
      })
      .describe('The processor.'),
    loadBefore: z
      .object({
        cpuBusyPercent: z
          .number()
          .describe('Average busy % over all CPUs, sampled for ~200 ms before the run.'),
        maxCpuBusyPercent: z.number().describe('Busy % of the busiest CPU in that sample.'),
        loadAverage: z
          .array(z.number())
          .describe('1, 5 and 15 minute load averages (always zeros on Windows).'),
      })
      .describe('How loaded the machine was just before the run.'),
    node: z.string().describe('Node.js version that ran the kernel.'),
  })
  .meta({
    id: 'BenchmarkEnvironment',
    description: 'What the result was measured on, so results can be compared later.',
  });
export type BenchmarkEnvironment = z.infer<typeof BenchmarkEnvironment>;

/** The fields a stored summary repeats from the result it sums up. */
const runFields = {
  id: BenchmarkId,
  startedAt: z.string().describe('ISO 8601 time the run started (after the busy guard).'),
  durationMs: z.number().describe('Wall time of the whole run (ms).'),
  profile: BenchmarkProfile,
  threads: z.number().int().describe('Threads of the all-core phase.'),
};

export const BenchmarkSummary = z
  .object({
    ...runFields,
    plan: z
      .string()
      .nullable()
      .describe('Name and id of the plan in force during the run; null when none is exposed.'),
    backend: BackendName,
    singleThreadMops: z.number().describe('Sustained single-thread throughput (Mops/s).'),
    allCoreMops: z.number().describe('Sustained all-core throughput (Mops/s).'),
    burstPenaltyPercent: z
      .number()
      .describe('Median burst penalty after the longest idle gap (%; 0 = as fast as warm).'),
    noisy: z.boolean().describe('True when any phase was flagged noisy.'),
    wakeUpUs: z
      .number()
      .optional()
      .describe(
        'Median wake-up cost per request over the 0.1-10 ms gaps (us): overshoot plus first-unit slowdown.',
      ),
    headline: z
      .string()
      .optional()
      .describe('Both halves in one line: "wake-up: +X us per request; ramp: +Y% for Z ms".'),
  })
  .meta({ id: 'BenchmarkSummary', description: 'The headline figures of one stored result.' });
export type BenchmarkSummary = z.infer<typeof BenchmarkSummary>;

export const BenchmarkResult = z
  .object({
    ...runFields,
    finishedAt: z.string().describe('ISO 8601 time the run finished.'),
    capMs: z.number().describe('Hard cap on the duration; the run is stopped when it is reached (ms).'),
    idleGapsMs: z.array(z.number().int()).describe('The idle gap ladder used (ms).'),
    repetitions: z.number().int().describe('Bursts timed per idle gap.'),
    forced: z.boolean().describe('True when the busy guard was overridden with force.'),
    environment: BenchmarkEnvironment,
    phases: BenchmarkPhases,
    summary: BenchmarkSummary,
    warnings: z
      .array(z.string())
      .describe('Things a reader of the figures should know (noise, virtualization, load).'),
  })
  .meta({ id: 'BenchmarkResult', description: 'One run of the short CPU benchmark.' });
export type BenchmarkResult = z.infer<typeof BenchmarkResult>;

export const BenchmarkList = z
  .object({
    total: z.number().int().describe('Results kept in the history (at most 100).'),
    benchmarks: z.array(BenchmarkSummary).describe('Newest first.'),
  })
  .meta({ id: 'BenchmarkList', description: 'The stored benchmark history, newest first.' });
export type BenchmarkList = z.infer<typeof BenchmarkList>;
