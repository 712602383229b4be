/**
 * The plan's costs the workload model uses, taken from a benchmark result: per idle gap of the
 * wake-up probe the cost above the shortest gap's, per idle gap of the burst ladder the time a
 * burst loses to the clock ramp, each with a range of two standard errors of its median. Without
 * a benchmark, the published exit latencies of the states in use stand in (the wake-up half only).
 * Where the benchmark measured its loss curve, each gap's loss by the work done comes with it: the
 * mean over the bursts (the loss to expect) with two standard errors of it, or in results of
 * earlier versions the median.
 */
import type { BenchmarkResult } from '../domain/benchmark.ts';
import type { PlanCosts, RampPoint, StreamGap, WakePoint } from './plan-losses.ts';

/**
 * The standard error of a median from its spread: sigma estimated from a quantile distance of a
 * normal distribution (`z` standard deviations apart), times 1.253 / sqrt(n).
 */
const medianError = (spread: number, z: number, n: number): number =>
  n > 0 ? (1.253 * Math.max(spread, 0)) / z / Math.sqrt(n) : 0;

/** p50 to p99 of a normal distribution: 2.326 standard deviations; p10 to p90: 2.563. */
const Z_P50_P99 = 2.326;
const Z_P10_P90 = 2.563;

const wakePoints = (r: BenchmarkResult): WakePoint[] => {
  const gaps = r.phases.wakeUp?.gaps ?? [];
  const floor = gaps[0];
  if (!floor) return [];
  const floorSe = medianError(floor.costUs.p99 - floor.costUs.p50, Z_P50_P99, floor.costUs.n);
  return gaps.map((g, i) => {
    const mid = i === 0 ? 0 : Math.max(0, g.costUs.p50 - floor.costUs.p50);
    const se =
      i === 0 ? 0 : Math.hypot(medianError(g.costUs.p99 - g.costUs.p50, Z_P50_P99, g.costUs.n), floorSe);
    return { gapUs: g.gapUs, costUs: { mid, low: Math.max(0, mid - 2 * se), high: mid + 2 * se } };
  });
};

const rampPoints = (r: BenchmarkResult): RampPoint[] => {
  const warmUs = r.phases.warmBaseline.burstMs.median * 1000;
  const unitUs = r.phases.warmBaseline.unitMs.median * 1000;
  return r.phases.burstsAfterIdle.map((b) => {
    const p = b.penalty;
    const se = medianError(p.p90 - p.p10, Z_P10_P90, p.n);
    const loss = (ratio: number) => Math.max(0, ratio - 1) * warmUs;
    const f = b.firstUnitPenalty;
    const fse = medianError(f.p90 - f.p10, Z_P10_P90, f.n);
    const slow = (ratio: number) => Math.max(0, ratio - 1);
    const rampUs = b.rampUpMs.median * 1000;
    // The mean loss where the curve has it (the loss to expect, with two standard errors of a
    // mean), else the median (results of earlier versions).
    const curve = b.lossCurve?.map((c) => {
      const expected =
        c.meanLossMs !== undefined && c.sdLossMs !== undefined
          ? { loss: c.meanLossMs, se: c.sdLossMs / Math.sqrt(Math.max(1, p.n)) }
          : { loss: c.lossMs, se: medianError(c.spreadMs, Z_P10_P90, p.n) };
      const mid = expected.loss * 1000;
      const cse = expected.se * 1000;
      return { workUs: c.units * unitUs, lossUs: { mid, low: mid - 2 * cse, high: mid + 2 * cse } };
    });
    return {
      gapUs: b.idleGapMs * 1000,
      lossUs: { mid: loss(p.median), low: loss(p.median - 2 * se), high: loss(p.median + 2 * se) },
      rampUs: rampUs > 0 ? Math.min(rampUs, warmUs) : warmUs,
      startSlowdown: { mid: slow(f.median), low: slow(f.median - 2 * fse), high: slow(f.median + 2 * fse) },
      unitUs,
      ...(curve?.length ? { curve } : {}),
    };
  });
};

/** The request stream by gap, each gap's sizes smallest first, with two standard errors of each mean. */
const streamGaps = (r: BenchmarkResult): StreamGap[] => {
  const unitUs = r.phases.warmBaseline.unitMs.median * 1000;
  const byGap = new Map<number, StreamGap['points']>();
  for (const p of r.phases.requestStream ?? []) {
    const mid = p.meanLossMs * 1000;
    const se = p.n > 0 ? (2 * p.sdLossMs * 1000) / Math.sqrt(p.n) : 0;
    const points = byGap.get(p.idleGapMs) ?? [];
    points.push({ workUs: p.units * unitUs, lossUs: { mid, low: mid - se, high: mid + se } });
    byGap.set(p.idleGapMs, points);
  }
  return [...byGap]
    .sort(([a], [b]) => a - b)
    .map(([gapMs, points]) => ({ gapUs: gapMs * 1000, points: points.sort((a, b) => a.workUs - b.workUs) }));
};

export const costsFromBenchmark = (r: BenchmarkResult): PlanCosts => {
  const stream = streamGaps(r);
  return {
    basis: 'benchmark',
    benchmarkId: r.id,
    wake: wakePoints(r),
    ramp: rampPoints(r),
    ...(stream.length ? { stream } : {}),
  };
};

/** No benchmark: the wake-up half from the states' published exit latencies, no clock ramp. */
export const publishedCosts = (): PlanCosts => ({ basis: 'published-latencies', wake: [], ramp: [] });
