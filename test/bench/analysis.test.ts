import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import {
  analyze,
  coefficientOfVariation,
  lossCurve,
  median,
  quantile,
  rampUp,
  stats,
} from '../../src/bench/analysis.ts';
import { busyPercents } from '../../src/bench/cpu-load.ts';
import { benchPlan, capMs, estimateMs, warmSlices } from '../../src/bench/profiles.ts';
import { CONTROL_WORDS, GAP_SPREAD, workerSource } from '../../src/bench/worker-source.ts';
import { burstTimes, flatClock, noise, rampingClock, syntheticRun } from './clock-model.ts';

describe('statistics', () => {
  it('interpolates quantiles linearly and computes the coefficient of variation', () => {
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    assert.equal(quantile(xs, 0.5), 5.5);
    assert.ok(Math.abs(quantile(xs, 0.1) - 1.9) < 1e-12);
    assert.ok(Math.abs(quantile(xs, 0.9) - 9.1) < 1e-12);
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(coefficientOfVariation([2, 2, 2]), 0);
    assert.equal(coefficientOfVariation([1, 3]), 0.5);
    const s = stats([4, 1, 3, 2], 'ms');
    assert.deepEqual([s.unit, s.n, s.min, s.median, s.max], ['ms', 4, 1, 2.5, 4]);
  });

  it('computes per-CPU busy percentages from two time snapshots', () => {
    const before = [
      { idle: 1000, total: 2000 },
      { idle: 500, total: 1000 },
    ];
    const after = [
      { idle: 1100, total: 2200 }, // 100 idle of 200: 50% busy
      { idle: 700, total: 1200 }, // all 200 idle: 0% busy
    ];
    assert.deepEqual(busyPercents(before, after), [50, 0]);
  });
});

describe('ramp-up time', () => {
  it('is the time before a window of units runs within 10% of warm', () => {
    assert.deepEqual(rampUp([3, 2, 1.5, 1, 1, 1, 1], 1), { ms: 5, settled: true });
  });
  it('is zero for a burst that starts at warm speed, even with one interrupted unit later', () => {
    assert.deepEqual(rampUp([1, 1, 5, 1, 1], 1), { ms: 0, settled: true });
  });
  it('is the whole burst, marked unsettled, when the clock never comes up', () => {
    assert.deepEqual(rampUp([2, 2, 2], 1), { ms: 6, settled: false });
  });
});

describe('loss curve', () => {
  it('is the time lost by each point of the burst, median over the bursts, with the whole burst last', () => {
    // Stop-and-go: 1 ms units of which every second one waits 3 ms more, for the first 8 units.
    const stopGo = Array.from({ length: 32 }, (_, i) => (i < 8 && i % 2 === 1 ? 4 : 1));
    const c = lossCurve([{ times: stopGo }, { times: stopGo.map((t) => t * 1.1) }, { times: stopGo }], 1);
    assert.deepEqual(
      c.map((p) => p.units),
      [1, 2, 3, 5, 8, 13, 20, 30, 32],
    );
    assert.deepEqual(
      c.map((p) => p.lossMs),
      [0, 3, 3, 6, 12, 12, 12, 12, 12],
    );
    // The one burst 10% slower lost 16.4 ms: p90 - p10 of [12, 12, 16.4].
    assert.ok(Math.abs(c[8]!.spreadMs - 3.52) < 1e-9, String(c[8]!.spreadMs));
    // Their mean: (12 + 16.4 + 12) / 3, and the sample standard deviation of the three.
    assert.ok(Math.abs(c[8]!.meanLossMs - 13.4667) < 1e-4, String(c[8]!.meanLossMs));
    assert.ok(Math.abs(c[8]!.sdLossMs - 2.5403) < 1e-4, String(c[8]!.sdLossMs));
  });
  it('gives the loss to expect where bursts lose all or nothing: the mean, where the median reads one of them', () => {
    // A stop-and-go whose first stop comes at once or only after the burst's third unit: one burst
    // in three loses 4 ms by then, two lose nothing.
    const late = Array.from({ length: 8 }, () => 1);
    const early = [5, 1, 1, 1, 1, 1, 1, 1];
    const c = lossCurve([{ times: late }, { times: early }, { times: late }], 1);
    assert.equal(c[2]!.units, 3);
    assert.equal(c[2]!.lossMs, 0);
    assert.ok(Math.abs(c[2]!.meanLossMs - 4 / 3) < 1e-4, String(c[2]!.meanLossMs));
  });
  it('is empty without bursts and stops at the shortest burst', () => {
    assert.deepEqual(lossCurve([], 1), []);
    assert.deepEqual(
      lossCurve([{ times: [2, 1] }, { times: [2, 1, 1] }], 1).map((p) => [p.units, p.lossMs]),
      [
        [1, 1],
        [2, 1],
      ],
    );
  });
  it('is measured by analyze for every gap', () => {
    const a = analyze(syntheticRun({ model: flatClock }));
    for (const g of a.phases.burstsAfterIdle) {
      assert.ok(g.lossCurve && g.lossCurve.length > 0);
      for (const p of g.lossCurve) assert.ok(Math.abs(p.lossMs) < 1e-6, `${g.idleGapMs}: ${p.lossMs}`);
    }
  });
});

describe('request stream', () => {
  it('is the mean, spread and median of what each request lost against as many warm units', () => {
    const raw = syntheticRun({ model: flatClock });
    raw.stream = [
      { gapMs: 50, units: 2, times: [2, 2, 6, 2] },
      { gapMs: 10, units: 2, times: [2, 2, 2, 2] },
    ];
    const warm = median(raw.warm.bursts.flat());
    const a = analyze(raw);
    const s = a.phases.requestStream ?? [];
    assert.deepEqual(
      s.map((p) => [p.idleGapMs, p.units, p.n]),
      [
        [50, 2, 4],
        [10, 2, 4],
      ],
    );
    assert.ok(Math.abs(s[0]!.meanLossMs - (3 - 2 * warm)) < 1e-3, String(s[0]!.meanLossMs));
    assert.ok(Math.abs(s[0]!.sdLossMs - 2) < 1e-3);
    assert.ok(Math.abs(s[0]!.medianLossMs - (2 - 2 * warm)) < 1e-3);
    assert.equal(s[1]!.sdLossMs, 0);
    // Results without a stream (earlier versions' raw runs) have none.
    assert.equal(analyze(syntheticRun({ model: flatClock })).phases.requestStream, undefined);
  });
});

describe('analysis of synthetic timing series', () => {
  it('finds no penalty, no ramp and no noise on a flat clock', () => {
    const a = analyze(syntheticRun({ model: flatClock }));
    assert.equal(a.noisy, false);
    assert.deepEqual(a.warnings, []);
    for (const g of a.phases.burstsAfterIdle) {
      assert.ok(Math.abs(g.penalty.median - 1) < 1e-9, `gap ${g.idleGapMs}: ${g.penalty.median}`);
      assert.equal(g.penaltyPercent.value, 0);
      assert.equal(g.rampUpMs.max, 0);
      assert.equal(g.unsettled, 0);
    }
  });

  it('finds a penalty on a ramping clock that grows with the idle gap and shrinks with shorter gaps', () => {
    const a = analyze(syntheticRun({ model: rampingClock, gaps: [10, 50, 200, 1000] }));
    const gaps = a.phases.burstsAfterIdle;
    assert.deepEqual(
      gaps.map((g) => g.idleGapMs),
      [10, 50, 200, 1000],
    );
    for (let i = 1; i < gaps.length; i++) {
      assert.ok(
        gaps[i]!.penalty.median > gaps[i - 1]!.penalty.median,
        `penalty after ${gaps[i]!.idleGapMs} ms should exceed that after ${gaps[i - 1]!.idleGapMs} ms`,
      );
      assert.ok(gaps[i]!.rampUpMs.median >= gaps[i - 1]!.rampUpMs.median);
    }
    const longest = gaps[3]!;
    assert.ok(longest.penaltyPercent.value > 20, `penalty ${longest.penaltyPercent.value}%`);
    assert.ok(gaps[0]!.penaltyPercent.value < 2, `short-gap penalty ${gaps[0]!.penaltyPercent.value}%`);
    // The first unit after 1 s idle runs at the modelled floor clock: 1 / (0.4 + 0.6 e^(-1000/300)).
    const expectedFirst = 1 / (0.4 + 0.6 * Math.exp(-1000 / 300));
    assert.ok(Math.abs(longest.firstUnitPenalty.median - expectedFirst) < 1e-3);
    assert.ok(longest.rampUpMs.median > 20 && longest.unsettled === 0);
    // The summary figure is the same ratio as the burst times the model produces.
    const model = burstTimes(rampingClock, 1000, 40).reduce((s, t) => s + t, 0) / 40;
    assert.ok(Math.abs(longest.penalty.median - model) < 1e-3);
    assert.equal(a.noisy, false);
  });

  it('flags a noisy series and says so in the warnings', () => {
    const a = analyze(syntheticRun({ model: flatClock, jitter: noise(0.4) }));
    assert.equal(a.noisy, true);
    assert.equal(a.phases.warmBaseline.noisy, true);
    assert.equal(a.phases.sustainedSingle.noisy, true);
    assert.ok(a.warnings.some((w) => w.includes('warm baseline')));
    assert.ok(a.phases.burstsAfterIdle.some((g) => g.noisy));
  });

  it('reports throughput in Mops/s and the all-core scaling efficiency', () => {
    const perfect = analyze(syntheticRun({ workers: 4 }));
    assert.equal(perfect.phases.sustainedSingle.throughput.value, 1000);
    assert.equal(perfect.phases.sustainedAllCore.throughput.value, 4000);
    assert.equal(perfect.phases.sustainedAllCore.speedup.value, 4);
    assert.equal(perfect.phases.sustainedAllCore.scalingEfficiency.value, 1);
    const shared = analyze(syntheticRun({ workers: 4, perThreadFactor: 0.5 }));
    assert.equal(shared.phases.sustainedAllCore.scalingEfficiency.value, 0.5);
  });
});

describe('profiles', () => {
  it('keeps quick within about 5 s and standard within about 20 s, each under its cap', () => {
    const quick = benchPlan('quick', 2);
    const standard = benchPlan('standard', 2);
    // About 5 s: 5.0 s, and 0.5 s more since the warm reference is timed in slices across the run.
    assert.ok(estimateMs(quick) <= 5_600, `quick ${estimateMs(quick)} ms`);
    // About 20 s: 19.9 s, 0.6 s more since the request stream's lead-in (150 ms per stream), and
    // 0.9 s since the warm slices.
    assert.ok(estimateMs(standard) <= 21_500, `standard ${estimateMs(standard)} ms`);
    assert.ok(capMs(quick) > estimateMs(quick) && capMs(standard) > estimateMs(standard));
    assert.deepEqual(benchPlan('quick', 1, [300, 20, 300]).idleGapsMs, [20, 300]);
  });
  it("leaves a stream's lead-in untimed, and counts it in the time estimate", () => {
    const standard = benchPlan('standard', 2);
    assert.equal(standard.streamLeadMs, 150);
    const none = { ...standard, streamLeadMs: 0 };
    // Per size and gap, the lead-in less the first request's gap and work, which it overlaps.
    const lead = standard.streamUnits.reduce(
      (s, u) => s + standard.streamGapsMs.reduce((t, g) => t + Math.max(0, 150 - (g + u)), 0),
      0,
    );
    assert.equal(estimateMs(standard) - estimateMs(none), lead);
    assert.ok(lead > 0);
  });
  it('runs the ladder as often as asked, the cap growing with it', () => {
    const standard = benchPlan('standard', 2);
    const nine = benchPlan('standard', 2, undefined, 9);
    assert.equal(standard.repetitions, 3);
    assert.equal(nine.repetitions, 9);
    // Six more runs of the ladder: each the sum of the gaps and a burst per gap; and the warm
    // reference in a slice before each run of the ladder and one after the stream: 4 slices of 2
    // bursts for the standard 8, 10 of 1 for nine runs.
    const ladderMs = standard.idleGapsMs.reduce((s, g) => s + g + standard.burstUnits, 0);
    assert.deepEqual(warmSlices(standard), { slices: 4, bursts: 2 });
    assert.deepEqual(warmSlices(nine), { slices: 10, bursts: 1 });
    const warmMs = (slices: number, bursts: number) =>
      slices * (standard.warmSpinMs + bursts * standard.burstUnits);
    assert.equal(estimateMs(nine) - estimateMs(standard), 6 * ladderMs + warmMs(10, 1) - warmMs(4, 2));
    assert.ok(capMs(nine) > estimateMs(nine));
  });
});

describe('the request stream in the worker', () => {
  const ask = (cmd: string, args: Record<string, unknown>) => {
    const control = new SharedArrayBuffer(CONTROL_WORDS * 4);
    const w = new Worker(workerSource, { eval: true, workerData: { control, index: 0 } });
    return new Promise<{ times: number[]; gapsMs?: number[]; waitedMs?: number }>((resolve, reject) => {
      w.once('message', (m: { ok: boolean; times: number[]; error?: string }) => {
        void w.terminate();
        if (m.ok) resolve(m);
        else reject(new Error(m.error));
      });
      w.postMessage({ seq: 1, cmd, ...args });
    });
  };

  it('times as many requests as asked, none that starts within the lead-in', async () => {
    const t0 = performance.now();
    const led = await ask('stream', { gapMs: 2, iterations: 10, units: 1, count: 4, leadMs: 80 });
    const ledMs = performance.now() - t0;
    assert.equal(led.times.length, 4);
    // The untimed requests waited out the lead-in, and each timed one waited its gap after it.
    assert.ok(ledMs >= 80 + 4 * 2, `${ledMs} ms`);
    const bare = await ask('stream', { gapMs: 2, iterations: 10, units: 1, count: 4 });
    assert.equal(bare.times.length, 4);
  });

  it('waits each gap drawn within GAP_SPREAD of it, at every phase rather than one', async () => {
    const within = (ms: number, gapMs: number) =>
      ms >= gapMs * (1 - GAP_SPREAD) && ms <= gapMs * (1 + GAP_SPREAD);
    const t0 = performance.now();
    const s = await ask('stream', { gapMs: 20, iterations: 10, units: 1, count: 12 });
    const elapsed = performance.now() - t0;
    const gaps = s.gapsMs ?? [];
    assert.equal(gaps.length, 12);
    assert.ok(
      gaps.every((g) => within(g, 20)),
      gaps.join(' '),
    );
    // Uniform over 17-23 ms: twelve draws all within 1 ms of each other have a chance below 1e-8.
    assert.ok(Math.max(...gaps) - Math.min(...gaps) > 1, gaps.join(' '));
    // The gaps drawn were waited, each before its request.
    assert.ok(elapsed >= gaps.reduce((a, b) => a + b, 0), `${elapsed} ms`);
    const waited = await Promise.all(
      [1, 2, 3, 4].map(() => ask('burst', { idleMs: 30, iterations: 10, units: 1 })),
    );
    for (const b of waited) assert.ok(within(b.waitedMs ?? Number.NaN, 30), String(b.waitedMs));
    assert.equal(new Set(waited.map((b) => b.waitedMs)).size, 4);
  });
});
