/**
 * Pure analysis of the benchmark's raw timings: statistics, burst penalty per idle gap, ramp-up
 * time, noise flags and all-core scaling. No I/O and no clock, so it is tested on synthetic series.
 */
import type { BenchmarkPhases, Percentiles, Stats, WakeUpPhase } from '../domain/benchmark.ts';

/** What the worker threads measured, before any interpretation. Times are in ms. */
export interface RawRun {
  calibration: { iterations: number; unitMs: number; checksum: number };
  warm: { spinMs: number; bursts: number[][] };
  /** One entry per timed burst, in the order they ran (the ladder repeated `repetitions` times). */
  idle: { gapMs: number; times: number[] }[];
  /** The request stream: per gap and size, the time of each request after the first. */
  stream?: { gapMs: number; units: number; times: number[] }[];
  /** The wake-up probe (us): per gap, overshoot and first small unit after each wake-up. */
  wake?: {
    unitIterations: number;
    warmUnitUs: number[];
    gaps: { gapUs: number; overshootUs: number[]; firstUnitUs: number[] }[];
  };
  single: { units: number; elapsedMs: number; sliceMs: number; slices: number[] };
  allCore: { perWorker: { units: number; elapsedMs: number }[] };
}

export interface Thresholds {
  /** Coefficient of variation of warm burst times above which the baseline is noisy. */
  warmCv: number;
  /** Coefficient of variation of the bursts after one gap above which that gap is noisy. */
  burstCv: number;
  /** Coefficient of variation of sustained single-thread slices above which it is noisy. */
  sustainedCv: number;
  /** Coefficient of variation between all-core threads above which that phase is noisy. */
  threadCv: number;
  /** A unit is "up to speed" within this fraction of the warm unit median. */
  rampTolerance: number;
}

export const defaultThresholds: Thresholds = {
  warmCv: 0.1,
  burstCv: 0.15,
  sustainedCv: 0.1,
  threadCv: 0.15,
  rampTolerance: 0.1,
};

const round = (x: number, digits = 4): number => {
  if (!Number.isFinite(x)) return 0;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** Linear-interpolated quantile of an ascending array (the "R-7" definition spreadsheets use). */
export const quantile = (sorted: readonly number[], q: number): number => {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
};

export const median = (values: readonly number[]): number =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

/** Coefficient of variation (population standard deviation / mean); 0 for fewer than 2 samples. */
export const coefficientOfVariation = (values: readonly number[]): number => {
  if (values.length < 2) return 0;
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  if (mean === 0) return 0;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  return Math.sqrt(variance) / Math.abs(mean);
};

export const stats = (values: readonly number[], unit: string): Stats => {
  const s = [...values].sort((a, b) => a - b);
  return {
    unit,
    n: s.length,
    min: round(s[0] ?? 0),
    p10: round(quantile(s, 0.1)),
    median: round(quantile(s, 0.5)),
    p90: round(quantile(s, 0.9)),
    max: round(s[s.length - 1] ?? 0),
    cv: round(coefficientOfVariation(s)),
  };
};

const sum = (xs: readonly number[]): number => xs.reduce((s, v) => s + v, 0);

/** Mean and sample standard deviation (0 and 0 without values, sd 0 for one). */
const meanSd = (xs: readonly number[]): { mean: number; sd: number } => {
  const n = xs.length;
  const mean = n ? sum(xs) / n : 0;
  return { mean, sd: n > 1 ? Math.sqrt(sum(xs.map((x) => (x - mean) ** 2)) / (n - 1)) : 0 };
};

export const percentiles = (values: readonly number[], unit: string, digits = 2): Percentiles => {
  const s = [...values].sort((a, b) => a - b);
  return {
    unit,
    n: s.length,
    p50: round(quantile(s, 0.5), digits),
    p99: round(quantile(s, 0.99), digits),
    max: round(s[s.length - 1] ?? 0, digits),
  };
};

/** The wake-up probe's distributions per gap, against the warm median of the same small unit. */
export const analyzeWake = (wake: NonNullable<RawRun['wake']>): WakeUpPhase => {
  const warm = median(wake.warmUnitUs);
  return {
    unitUs: { value: round(warm, 2), unit: 'us' },
    rounds: wake.gaps[0]?.overshootUs.length ?? 0,
    gaps: [...wake.gaps]
      .sort((a, b) => a.gapUs - b.gapUs)
      .map((g) => ({
        gapUs: g.gapUs,
        overshootUs: percentiles(
          g.overshootUs.map((x) => Math.max(0, x)),
          'us',
        ),
        firstUnitUs: percentiles(g.firstUnitUs, 'us'),
        firstUnitSlowdown: percentiles(
          g.firstUnitUs.map((x) => (warm > 0 ? x / warm : 1)),
          'ratio',
          3,
        ),
        costUs: percentiles(
          g.overshootUs.map((o, i) => Math.max(0, o) + Math.max(0, (g.firstUnitUs[i] ?? warm) - warm)),
          'us',
        ),
      })),
  };
};

/** Median wake-up cost per request over the gaps (us), from each gap's median. */
export const wakeUpCostUs = (w: WakeUpPhase): number => round(median(w.gaps.map((g) => g.costUs.p50)), 1);

/** "wake-up: +X us per request; ramp: +Y% for Z ms": both halves of what the plan costs. */
export const headline = (phases: BenchmarkPhases): string => {
  const longest = phases.burstsAfterIdle[phases.burstsAfterIdle.length - 1];
  const ramp = longest
    ? `ramp: ${longest.penaltyPercent.value >= 0 ? '+' : ''}${longest.penaltyPercent.value.toFixed(1)}% for ${longest.rampUpMs.median.toFixed(1)} ms after ${longest.idleGapMs} ms idle`
    : 'ramp: not measured';
  const wake = phases.wakeUp
    ? `wake-up: +${wakeUpCostUs(phases.wakeUp).toFixed(1)} us per request`
    : 'wake-up: not measured';
  return `${wake}; ${ramp}`;
};

/**
 * How long a burst took to reach warm speed: the time before the first unit from which the median
 * of a short window of units is within `tolerance` of the warm unit time. A window, not a single
 * unit, so one lucky unit on a still-slow core does not end the ramp, and one interrupt after it
 * does not restart it.
 */
export const rampUp = (
  times: readonly number[],
  warmUnitMs: number,
  tolerance = defaultThresholds.rampTolerance,
  window = 3,
): { ms: number; settled: boolean } => {
  const limit = warmUnitMs * (1 + tolerance);
  for (let i = 0; i < times.length; i++) {
    if (median(times.slice(i, i + window)) <= limit) return { ms: sum(times.slice(0, i)), settled: true };
  }
  return { ms: sum(times), settled: false };
};

/** Where the loss curve is read: log-spaced over a burst, so a short piece of work is seen closely. */
const LOSS_POINTS = [1, 2, 3, 5, 8, 13, 20, 30, 60];

/**
 * The time the bursts after one gap lost by each point (their first `units` units against as many
 * warm units), median and p10-p90 spread over the bursts, and their mean and standard deviation
 * (the loss to expect: a stop-and-go's bursts lose all or nothing, and a median of three reads
 * one or the other); the last point is the whole burst. A
 * slowed clock's ramp, a step or a stop-and-go all show here as they are, where a ramp-up time
 * read from single units can miss them (a unit that fits between two stops runs at full speed).
 */
export const lossCurve = (
  runs: readonly { times: readonly number[] }[],
  warmUnitMs: number,
): { units: number; lossMs: number; spreadMs: number; meanLossMs: number; sdLossMs: number }[] => {
  const length = Math.min(...runs.map((r) => r.times.length));
  if (!runs.length || !Number.isFinite(length) || length < 1) return [];
  const points = [...LOSS_POINTS.filter((k) => k < length), length];
  return points.map((units) => {
    const losses = runs.map((r) => sum(r.times.slice(0, units)) - units * warmUnitMs);
    const s = [...losses].sort((a, b) => a - b);
    const { mean, sd } = meanSd(losses);
    return {
      units,
      lossMs: round(quantile(s, 0.5)),
      spreadMs: round(quantile(s, 0.9) - quantile(s, 0.1)),
      meanLossMs: round(mean),
      sdLossMs: round(sd),
    };
  });
};

/** Million kernel iterations per second from a count of units done in `ms` milliseconds. */
const mops = (units: number, iterations: number, ms: number): number =>
  ms > 0 ? (units * iterations) / ms / 1000 : 0;

export interface Analysis {
  phases: BenchmarkPhases;
  noisy: boolean;
  /** Human-readable notes on noisy phases. */
  warnings: string[];
}

export const analyze = (raw: RawRun, t: Thresholds = defaultThresholds): Analysis => {
  const warnings: string[] = [];
  const iterations = raw.calibration.iterations;
  const flag = (noisy: boolean, what: string, cv: number): boolean => {
    if (noisy)
      warnings.push(`${what} is noisy (spread ${(cv * 100).toFixed(0)}%); do not base advice on it.`);
    return noisy;
  };

  const warmBurstTimes = raw.warm.bursts.map(sum);
  const warmUnits = raw.warm.bursts.flat();
  const warmBurst = stats(warmBurstTimes, 'ms');
  const warmUnit = stats(warmUnits, 'ms');
  const warmBurstMedian = median(warmBurstTimes);
  const warmUnitMedian = median(warmUnits);

  const gaps = [...new Set(raw.idle.map((b) => b.gapMs))].sort((a, b) => a - b);
  const burstsAfterIdle = gaps.map((gapMs) => {
    const runs = raw.idle.filter((b) => b.gapMs === gapMs);
    const burstTimes = runs.map((r) => sum(r.times));
    const ramps = runs.map((r) => rampUp(r.times, warmUnitMedian, t.rampTolerance));
    const penalty = stats(
      burstTimes.map((b) => b / warmBurstMedian),
      'ratio',
    );
    const burstMs = stats(burstTimes, 'ms');
    return {
      idleGapMs: gapMs,
      burstMs,
      penalty,
      penaltyPercent: { value: round((penalty.median - 1) * 100, 2), unit: '%' },
      firstUnitPenalty: stats(
        runs.map((r) => (r.times[0] ?? 0) / warmUnitMedian),
        'ratio',
      ),
      rampUpMs: stats(
        ramps.map((r) => r.ms),
        'ms',
      ),
      unsettled: ramps.filter((r) => !r.settled).length,
      lossCurve: lossCurve(runs, warmUnitMedian),
      noisy: flag(runs.length < 2 || burstMs.cv > t.burstCv, `The burst after ${gapMs} ms idle`, burstMs.cv),
    };
  });

  const requestStream = raw.stream?.map((r) => {
    const losses = r.times.map((t) => t - r.units * warmUnitMedian);
    const n = losses.length;
    const { mean, sd } = meanSd(losses);
    return {
      idleGapMs: r.gapMs,
      units: r.units,
      n,
      meanLossMs: round(mean),
      sdLossMs: round(sd),
      medianLossMs: round(n ? median(losses) : 0),
    };
  });

  const singleMops = mops(raw.single.units, iterations, raw.single.elapsedMs);
  const slices = stats(
    raw.single.slices.map((u) => mops(u, iterations, raw.single.sliceMs)),
    'Mops/s',
  );

  const perThread = raw.allCore.perWorker.map((w) => mops(w.units, iterations, w.elapsedMs));
  const threads = perThread.length;
  const totalMops = sum(perThread);
  const perThreadStats = stats(perThread, 'Mops/s');
  const speedup = singleMops > 0 ? totalMops / singleMops : 0;

  const phases: BenchmarkPhases = {
    calibration: {
      unitIterations: iterations,
      unitMs: { value: round(raw.calibration.unitMs), unit: 'ms' },
      checksum: raw.calibration.checksum | 0,
    },
    warmBaseline: {
      spinMs: { value: raw.warm.spinMs, unit: 'ms' },
      burstUnits: raw.warm.bursts[0]?.length ?? 0,
      burstMs: warmBurst,
      unitMs: warmUnit,
      noisy: flag(warmBurst.n < 3 || warmBurst.cv > t.warmCv, 'The warm baseline', warmBurst.cv),
    },
    burstsAfterIdle,
    ...(requestStream?.length ? { requestStream } : {}),
    ...(raw.wake ? { wakeUp: analyzeWake(raw.wake) } : {}),
    sustainedSingle: {
      durationMs: { value: round(raw.single.elapsedMs, 1), unit: 'ms' },
      throughput: { value: round(singleMops, 2), unit: 'Mops/s' },
      unitsPerSecond: {
        value: round(raw.single.elapsedMs > 0 ? (raw.single.units * 1000) / raw.single.elapsedMs : 0, 1),
        unit: 'units/s',
      },
      slices,
      noisy: flag(slices.n < 3 || slices.cv > t.sustainedCv, 'The sustained single-thread run', slices.cv),
    },
    sustainedAllCore: {
      threads,
      durationMs: {
        value: round(Math.max(0, ...raw.allCore.perWorker.map((w) => w.elapsedMs)), 1),
        unit: 'ms',
      },
      throughput: { value: round(totalMops, 2), unit: 'Mops/s' },
      perThread: perThreadStats,
      speedup: { value: round(speedup, 3), unit: 'ratio' },
      scalingEfficiency: { value: round(threads > 0 ? speedup / threads : 0, 3), unit: 'ratio' },
      noisy: flag(perThreadStats.cv > t.threadCv, 'The all-core run', perThreadStats.cv),
    },
  };
  const noisy =
    phases.warmBaseline.noisy ||
    burstsAfterIdle.some((g) => g.noisy) ||
    phases.sustainedSingle.noisy ||
    phases.sustainedAllCore.noisy;
  return { phases, noisy, warnings };
};
