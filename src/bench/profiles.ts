/**
 * The benchmark profiles (how long each phase runs) and the hard cap on a run's duration derived
 * from them. `quick` fits in about 5.5 s of wall time, `standard` in about 21 s.
 */
import type { BenchmarkProfile } from '../domain/benchmark.ts';

export interface BenchPlan {
  profile: BenchmarkProfile;
  threads: number;
  /** Idle gaps (ms), shortest first; the ladder is run `repetitions` times, interleaved. */
  idleGapsMs: number[];
  repetitions: number;
  calibrateSpinMs: number;
  /**
   * The warm reference: `warmBursts` bursts in all, timed after a spin of `warmSpinMs` in slices
   * across the run (warmSlices).
   */
  warmSpinMs: number;
  warmBursts: number;
  /** Units (about 1 ms each) per burst, long enough to see a ramp-up of a few tens of ms. */
  burstUnits: number;
  /**
   * The request stream: requests of these sizes (units), each size `streamRequests` times in a row
   * after each of `streamGapsMs`, so that the clock is in the state short requests leave it in.
   */
  streamGapsMs: number[];
  streamUnits: number[];
  streamRequests: number;
  /**
   * The stream's lead-in (ms): requests that start within it are not timed. A stream's first gap
   * follows a long one (the ladder's, or the previous size's longest), and from a clock that fell
   * there a slow ramp needs several short requests to rise: under the PostgreSQL check's emulated
   * 40 ms ramp, six benchmarks with one request untimed measured 1.5-4.0 ms of loss per 3 ms
   * request after 5 ms gaps, the first, against 0.1-1.2 ms after 7 ms gaps, which the 5 ms stream
   * had raised.
   */
  streamLeadMs: number;
  sustainWarmupMs: number;
  sustainMs: number;
  sliceMs: number;
  /** Wake-up probe: idle gaps (us), rounds over the ladder, and the small unit's target time (us). */
  wakeGapsUs: number[];
  wakeRounds: number;
  wakeUnitUs: number;
}

/** The wake-up probe's gaps: 0.1 ms to 10 ms, where idle-state exit latency and timer slack show. */
export const WAKE_GAPS_US = [100, 200, 500, 1000, 2000, 5000, 10000];

const profiles: Record<BenchmarkProfile, Omit<BenchPlan, 'profile' | 'threads'>> = {
  quick: {
    idleGapsMs: [50, 200, 1000],
    repetitions: 2,
    calibrateSpinMs: 100,
    warmSpinMs: 250,
    warmBursts: 5,
    burstUnits: 30,
    streamGapsMs: [50],
    streamUnits: [2],
    streamRequests: 5,
    streamLeadMs: 150,
    sustainWarmupMs: 100,
    sustainMs: 400,
    sliceMs: 50,
    wakeGapsUs: WAKE_GAPS_US,
    wakeRounds: 15,
    wakeUnitUs: 20,
  },
  standard: {
    idleGapsMs: [10, 50, 200, 500, 1000, 2000],
    repetitions: 3,
    calibrateSpinMs: 150,
    warmSpinMs: 300,
    warmBursts: 8,
    burstUnits: 60,
    streamGapsMs: [10, 50, 100],
    streamUnits: [1, 3],
    streamRequests: 6,
    streamLeadMs: 150,
    sustainWarmupMs: 200,
    sustainMs: 1500,
    sliceMs: 100,
    wakeGapsUs: WAKE_GAPS_US,
    wakeRounds: 40,
    wakeUnitUs: 20,
  },
};

/** The longest gap a request stream waits (ms): its requests come one after another. */
const MAX_STREAM_GAP_MS = 200;

export const benchPlan = (
  profile: BenchmarkProfile,
  threads: number,
  idleGapsMs?: readonly number[],
  repetitions?: number,
): BenchPlan => {
  const base = profiles[profile];
  const gaps = idleGapsMs?.length ? [...new Set(idleGapsMs)].sort((a, b) => a - b) : base.idleGapsMs;
  // The stream follows the ladder's gaps up to the longest a stream can wait out in reasonable time.
  const streamGaps = idleGapsMs?.length ? gaps.filter((g) => g <= MAX_STREAM_GAP_MS) : base.streamGapsMs;
  return {
    ...base,
    profile,
    threads,
    idleGapsMs: gaps,
    repetitions: repetitions ?? base.repetitions,
    streamGapsMs: streamGaps.length ? streamGaps : [Math.min(...gaps, MAX_STREAM_GAP_MS)],
  };
};

/**
 * The warm reference's slices: one before each run of the ladder and one after the request stream,
 * each a spin and `bursts` bursts, so that the reference is timed across the run it is the reference
 * of. A host's speed drifts over seconds (a virtual machine's neighbours): timed once at the start,
 * the reference of perf:workload's benchmarks (132 on one day, docs/BENCHMARK.md) was off by more than
 * 5% in 32 of them, -14% to +28%, against the bursts after gaps too short for its emulated plans to
 * lower the clock, and the offset was read as a ramp after every gap, or as none.
 */
export const warmSlices = (p: BenchPlan): { slices: number; bursts: number } => {
  const slices = p.repetitions + 1;
  return { slices, bursts: Math.max(1, Math.round(p.warmBursts / slices)) };
};

/** Expected wall time of a run (ms), not counting worker start-up. */
export const estimateMs = (p: BenchPlan): number => {
  const idle = p.repetitions * p.idleGapsMs.reduce((s, g) => s + g + p.burstUnits, 0);
  const { slices, bursts } = warmSlices(p);
  const warm = slices * (p.warmSpinMs + bursts * p.burstUnits);
  const sustained = 2 * (p.sustainWarmupMs + p.sustainMs);
  const wake = (p.wakeRounds * p.wakeGapsUs.reduce((s, g) => s + g + p.wakeUnitUs, 0)) / 1000 + 50;
  // Per size and gap: the timed requests, the first, and those the lead-in leaves untimed.
  const stream = p.streamUnits.reduce(
    (s, u) =>
      s +
      p.streamGapsMs.reduce(
        (t, g) => t + (p.streamRequests + 1) * (g + u) + Math.max(0, p.streamLeadMs - (g + u)),
        0,
      ),
    0,
  );
  return p.calibrateSpinMs + 50 + warm + idle + stream + sustained + wake;
};

/**
 * The hard cap: twice the estimate (a loaded or throttled machine runs slower), plus time to start
 * the workers, plus a fixed margin. A run that reaches it is stopped and answered with `timeout`.
 */
export const capMs = (p: BenchPlan): number => Math.round(2 * estimateMs(p) + 50 * p.threads + 10_000);
