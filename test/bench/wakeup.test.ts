/**
 * The wake-up probe beside its reference, cyclictest, in the same run and under two conditions (the
 * machine as it is, and /dev/cpu_dma_latency held at 0, which forbids every idle state but
 * polling). Timings are not asserted (they belong to `npm run perf:wakeup`, which checks the
 * tolerance): this checks that both tools measured the same gaps with full distributions, that the
 * analysis turns raw samples into the published shape, and that cyclictest's histogram is read right.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { CYCLICTEST, mergeCyclictest, parseCyclictest, runCyclictest } from '../../perf/lib/cyclictest.ts';
import { analyzeWake, headline } from '../../src/bench/analysis.ts';
import { runWakeProbe } from '../../src/bench/runner.ts';

// In CI, .ci/run installs rt-tests: a missing cyclictest fails there instead of skipping.
const hasCyclictest = existsSync(CYCLICTEST) || process.env.CI === 'true';
const gaps = [100, 1000];

describe('wake-up probe and cyclictest', () => {
  it('reads a cyclictest histogram: percentiles from the buckets, overflows at the maximum', () => {
    const text = [
      '# Histogram',
      '000010 000050',
      '000011 000040',
      '000012 000000',
      '000090 000009',
      '# Total: 000000100',
      '# Min Latencies: 00010',
      '# Avg Latencies: 00012',
      '# Max Latencies: 00950',
      '# Histogram Overflows: 00001',
    ].join('\n');
    const r = parseCyclictest(text);
    assert.deepEqual([r.samples, r.p50, r.p99, r.max, r.overflows], [100, 10, 90, 950, 1]);
    const two = mergeCyclictest([r, r]);
    assert.deepEqual([two.samples, two.p50, two.p99, two.max], [200, 10, 90, 950]);
  });

  it('turns raw probe samples into p50/p99/max per gap against the warm unit', () => {
    const w = analyzeWake({
      unitIterations: 1000,
      warmUnitUs: [20, 20, 21],
      gaps: [{ gapUs: 100, overshootUs: [50, 60, -1, 70], firstUnitUs: [40, 20, 20, 30] }],
    });
    const g = w.gaps[0]!;
    assert.equal(w.unitUs.value, 20);
    assert.deepEqual([g.overshootUs.p50, g.overshootUs.max, g.overshootUs.n], [55, 70, 4]);
    assert.equal(g.firstUnitSlowdown.max, 2);
    assert.equal(g.costUs.max, 80, 'overshoot plus the first unit beyond warm');
  });

  const both = async () => {
    const probe = analyzeWake(await runWakeProbe({ gapsUs: gaps, rounds: 20 }));
    const refs = await Promise.all(gaps.map((g) => runCyclictest({ intervalUs: g, loops: 20 })));
    return { probe, refs };
  };
  const check = ({ probe, refs }: Awaited<ReturnType<typeof both>>) => {
    assert.deepEqual(
      probe.gaps.map((g) => g.gapUs),
      gaps,
    );
    for (const [i, g] of probe.gaps.entries()) {
      assert.equal(g.overshootUs.n, 20);
      assert.ok(g.overshootUs.p50 <= g.overshootUs.p99 && g.overshootUs.p99 <= g.overshootUs.max);
      const ref = refs[i]!;
      assert.equal(ref.samples, 20, 'cyclictest measured as many wake-ups');
      assert.ok(ref.p50 <= ref.p99 && ref.p99 <= ref.max);
    }
  };

  // cyclictest sets its thread's scheduling policy, which it may only do as root (without
  // RLIMIT_RTPRIO it exits "Unable to change scheduling policy!").
  it('measures the same gaps as cyclictest with the machine as it is', {
    skip: (!hasCyclictest || process.getuid?.() !== 0) && 'needs root and cyclictest',
  }, async () => {
    check(await both());
  });

  it('and again with /dev/cpu_dma_latency held at 0 by a helper', {
    skip:
      (!hasCyclictest || process.getuid?.() !== 0 || !existsSync('/dev/cpu_dma_latency')) &&
      'needs root and cyclictest',
  }, async () => {
    const fh = await open('/dev/cpu_dma_latency', 'w');
    try {
      await fh.write(Buffer.alloc(4));
      check(await both());
    } finally {
      await fh.close();
    }
  });

  it('names both halves in the headline', () => {
    const text = headline({
      burstsAfterIdle: [{ idleGapMs: 1000, penaltyPercent: { value: 12.5 }, rampUpMs: { median: 30 } }],
      wakeUp: { gaps: [{ costUs: { p50: 40 } }, { costUs: { p50: 60 } }] },
    } as never);
    assert.equal(text, 'wake-up: +50.0 us per request; ramp: +12.5% for 30.0 ms after 1000 ms idle');
  });
});
