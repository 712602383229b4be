/**
 * A synthetic CPU clock for testing the analysis: the clock decays towards a floor while idle and
 * climbs back towards full speed while busy, both exponentially, the way a power-saving governor
 * behaves. Produces the raw timings a real run would, without a real CPU.
 */
import type { RawRun } from '../../src/bench/analysis.ts';

export interface ClockModel {
  /** Lowest clock, as a fraction of full speed. */
  floor: number;
  /** Time constant of the decay while idle (ms). */
  tauDownMs: number;
  /** Time constant of the climb while busy (ms). */
  tauUpMs: number;
}

/** No power saving at all: the clock never moves. */
export const flatClock: ClockModel = { floor: 1, tauDownMs: 1, tauUpMs: 1 };
/** A Balanced-like plan: drops to 40% within about a second idle, needs ~20 ms to come back. */
export const rampingClock: ClockModel = { floor: 0.4, tauDownMs: 300, tauUpMs: 20 };

/** Per-unit times (ms) of a burst of 1 ms units after `gapMs` of idle on a clock that was at full speed. */
export const burstTimes = (m: ClockModel, gapMs: number, units: number): number[] => {
  let f = m.floor + (1 - m.floor) * Math.exp(-gapMs / m.tauDownMs);
  const times: number[] = [];
  for (let i = 0; i < units; i++) {
    const t = 1 / f;
    times.push(t);
    f = 1 - (1 - f) * Math.exp(-t / m.tauUpMs);
  }
  return times;
};

/** A deterministic multiplicative noise source: 1 ± amplitude, uniform. */
export const noise = (amplitude: number, seed = 42) => {
  let s = seed >>> 0;
  return (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return 1 + amplitude * ((s / 2 ** 32) * 2 - 1);
  };
};

export interface SyntheticOptions {
  model?: ClockModel;
  gaps?: number[];
  repetitions?: number;
  units?: number;
  /** Multiplies each burst's unit times and each sustained slice's count; 1 for a quiet machine. */
  jitter?: () => number;
  workers?: number;
  /** Per-thread throughput in the all-core phase relative to single-thread (1 = perfect scaling). */
  perThreadFactor?: number;
}

export const ITERATIONS = 1_000_000;

export const syntheticRun = (o: SyntheticOptions = {}): RawRun => {
  const model = o.model ?? flatClock;
  const gaps = o.gaps ?? [10, 50, 200, 1000];
  const units = o.units ?? 40;
  const jitter = o.jitter ?? (() => 1);
  // Noise hits whole bursts (another process, an interrupt storm), so it does not average out.
  const shake = (xs: number[]) => {
    const k = jitter();
    return xs.map((x) => x * k);
  };
  const idle: RawRun['idle'] = [];
  for (let r = 0; r < (o.repetitions ?? 3); r++) {
    for (const gapMs of gaps) idle.push({ gapMs, times: shake(burstTimes(model, gapMs, units)) });
  }
  // 1 ms per unit of ITERATIONS iterations: 1000 Mops/s when warm.
  const slices = Array.from({ length: 10 }, () => Math.round(50 / jitter()));
  const perWorker = Array.from({ length: o.workers ?? 2 }, () => ({
    units: Math.round(500 * (o.perThreadFactor ?? 1)),
    elapsedMs: 500,
  }));
  return {
    calibration: { iterations: ITERATIONS, unitMs: 1, checksum: 12345 },
    warm: { spinMs: 250, bursts: Array.from({ length: 6 }, () => shake(burstTimes(model, 0, units))) },
    idle,
    single: { units: 500, elapsedMs: 500, sliceMs: 50, slices },
    allCore: { perWorker },
  };
};
