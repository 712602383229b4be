/**
 * The costs the workload model reads from a benchmark: each gap's loss curve by its mean over the
 * bursts (the loss to expect) where the result has it, with two standard errors of that mean as its
 * range, and by the median in results of earlier versions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { costsFromBenchmark } from '../../src/advice/workload-costs.ts';
import type { BenchmarkResult } from '../../src/domain/benchmark.ts';
import { benchmarkResult } from '../advice/scenarios.ts';

/** A result whose bursts after every gap lost 0 ms at the median and 4/3 ms on average by 3 units. */
const withCurve = (mean: boolean): BenchmarkResult => {
  const r = benchmarkResult(20);
  for (const g of r.phases.burstsAfterIdle) {
    g.penalty = { ...g.penalty, n: 9 };
    g.lossCurve = [
      { units: 1, lossMs: 0, spreadMs: 0, ...(mean ? { meanLossMs: 0, sdLossMs: 0 } : {}) },
      { units: 3, lossMs: 0, spreadMs: 4, ...(mean ? { meanLossMs: 4 / 3, sdLossMs: 1.5 } : {}) },
    ];
  }
  return r;
};

describe('costs from a benchmark', () => {
  it('read each point of the loss curve by its mean, two standard errors of it either side', () => {
    const point = costsFromBenchmark(withCurve(true)).ramp[0]!.curve![1]!;
    assert.ok(Math.abs(point.lossUs.mid - 1333.3333) < 1e-3, String(point.lossUs.mid));
    // sd 1.5 ms over 9 bursts: a standard error of 0.5 ms.
    assert.ok(Math.abs(point.lossUs.high - point.lossUs.mid - 1000) < 1e-6, JSON.stringify(point.lossUs));
    assert.ok(Math.abs(point.lossUs.mid - point.lossUs.low - 1000) < 1e-6, JSON.stringify(point.lossUs));
  });
  it('read a result of an earlier version, without means, by its median', () => {
    const point = costsFromBenchmark(withCurve(false)).ramp[0]!.curve![1]!;
    assert.equal(point.lossUs.mid, 0);
    assert.ok(point.lossUs.high > 0, 'the median has a range from the spread');
  });
});
