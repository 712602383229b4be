/** Advice backed by measurement: a benchmark under the active plan, an A/B comparison, and the difference maths. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { difference, figuresOf, noiseVerdict } from '../../src/advice/measure.ts';
import { recommend } from '../../src/advice/recommend.ts';
import { type ComparisonEntry, Recommendation } from '../../src/domain/advice.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { benchmarkResult, win, windowsInput, windowsSettings } from './scenarios.ts';

const stock = [win.balanced, win.high, win.saver];
const balancedInput = () => windowsInput(stock, SCHEME.balanced, windowsSettings.balanced());

const entry = (
  plan: { id: string; name: string; kind: ComparisonEntry['plan']['kind'] },
  penalty: number,
  original: ComparisonEntry | undefined,
  id: string,
): ComparisonEntry => {
  const r = benchmarkResult(penalty, { id });
  const f = figuresOf(r);
  return {
    plan,
    original: original === undefined,
    benchmarkId: r.id,
    figures: f,
    difference: original
      ? {
          burstAfterIdle: difference(original.figures.burstAfterIdleMs, f.burstAfterIdleMs, false, false),
          singleThread: difference(original.figures.singleThreadMops, f.singleThreadMops, true, false),
          allCore: difference(original.figures.singleThreadMops, f.singleThreadMops, true, false),
        }
      : null,
  };
};

describe('difference with uncertainty', () => {
  const s = (median: number, p10: number, p90: number) => ({ median, p10, p90 });
  it('lower-is-better times: a clearly shorter burst is a significant gain', () => {
    const d = difference(s(40, 38, 42), s(30, 29, 31), false, false);
    assert.equal(d.percent, 25);
    assert.ok(d.low > 0 && d.high > d.low);
    assert.equal(d.significant, true);
  });
  it('overlapping spreads are not significant', () => {
    const d = difference(s(40, 30, 50), s(38, 29, 48), false, false);
    assert.ok(d.low < 0 && d.high > 0);
    assert.equal(d.significant, false);
  });
  it('a noisy run is never significant: its verdict is noisy, not within the noise', () => {
    const d = difference(s(40, 38, 42), s(30, 29, 31), false, true);
    assert.equal(d.significant, false);
    assert.equal(d.verdict, 'noisy');
  });

  it('one rule: the verdict follows the range as shown, for any spreads (property)', () => {
    const spread = fc
      .tuple(
        fc.double({ min: 1, max: 1000, noNaN: true }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
      )
      .map(([median, below, above]) => ({ median, p10: median * (1 - below), p90: median * (1 + above) }));
    fc.assert(
      fc.property(spread, spread, fc.boolean(), fc.boolean(), (a, b, higher, noisy) => {
        const d = difference(a, b, higher, noisy);
        assert.equal(d.low <= d.high, true);
        const expected = noisy ? 'noisy' : d.low > 0 ? 'better' : d.high < 0 ? 'worse' : 'within-noise';
        assert.equal(d.verdict, expected);
        assert.equal(noiseVerdict(d.low, d.high, noisy), d.verdict);
        assert.equal(d.significant, d.verdict === 'better' || d.verdict === 'worse');
        // The median lies inside its range, so a clear verdict agrees with the sign shown.
        if (d.verdict === 'better') assert.ok(d.percent > 0);
        if (d.verdict === 'worse') assert.ok(d.percent < 0);
      }),
      { numRuns: 500 },
    );
  });
  it('higher-is-better throughput: a drop is negative', () => {
    const d = difference(s(100, 99, 101), s(80, 79, 81), true, false);
    assert.equal(d.percent, -20);
    assert.equal(d.significant, true);
  });
});

describe('advice with a benchmark under the active plan', () => {
  it('a clear burst penalty backs the change, with the measured fact and an expected gain', () => {
    const r = Recommendation.parse(recommend({ ...balancedInput(), benchmark: benchmarkResult(34) }));
    assert.equal(r.changeRecommended, true);
    assert.equal(r.confidence, 'high');
    const measured = r.reasons.find((x) => x.fact.name === 'burstPenaltyPercent@1000ms');
    assert.equal(measured?.fact.value, 34);
    assert.equal(measured?.text, 'bursts after 1 s idle ran 34% slower than warm');
    const gain = r.expectedGain?.[0];
    assert.equal(gain?.metric, 'burst-after-idle');
    assert.equal(gain?.percent, 25.4, '1 - 1/1.34');
    assert.equal(r.basis.kind, 'benchmark');
    assert.deepEqual(r.basis.benchmarkIds, ['bm-20250101-120000-a1b2c3']);
  });

  it('almost no penalty measured: nothing to change, said so', () => {
    const r = recommend({ ...balancedInput(), benchmark: benchmarkResult(2) });
    assert.equal(r.changeRecommended, false);
    assert.match(
      r.summary,
      /^Nothing to change: Balanced showed almost no burst penalty .*so a performance plan would gain little\./,
    );
    assert.equal(r.recommended?.id, SCHEME.balanced);
    assert.deepEqual(r.actions, []);
  });

  it('a noisy benchmark is not rested on', () => {
    const r = recommend({ ...balancedInput(), benchmark: benchmarkResult(34, { noisy: true }) });
    assert.equal(r.changeRecommended, true);
    assert.equal(r.confidence, 'medium');
    assert.equal(r.expectedGain, undefined);
    assert.ok(r.caveats.some((c) => c.kind === 'measurement'));
  });

  it('a penalty that persists under High performance points at the firmware', () => {
    const input = windowsInput(stock, SCHEME.highPerformance, windowsSettings.performance());
    const r = recommend({ ...input, benchmark: benchmarkResult(30) });
    assert.equal(r.changeRecommended, false);
    assert.ok(r.caveats.some((c) => c.kind === 'firmware' && /BIOS/.test(c.text)));
  });
});

describe('advice from a comparison', () => {
  const bal = { id: SCHEME.balanced, name: 'Balanced', kind: 'balanced' as const };
  const high = { id: SCHEME.highPerformance, name: 'High performance', kind: 'high-performance' as const };

  it('a plan measured faster beyond the noise is recommended with the measured gain', () => {
    const orig = entry(bal, 34, undefined, 'bm-20250101-120000-000001');
    const cand = entry(high, 1, orig, 'bm-20250101-120000-000002');
    const r = Recommendation.parse(recommend({ ...balancedInput(), comparison: [orig, cand] }));
    assert.equal(r.changeRecommended, true);
    assert.equal(r.recommended?.id, SCHEME.highPerformance);
    assert.equal(r.confidence, 'high');
    assert.equal(r.basis.kind, 'comparison');
    assert.ok((r.expectedGain?.[0]?.percent ?? 0) > 20);
    assert.ok(
      r.reasons.some((x) => /ran 24\.6% faster under High performance than under Balanced/.test(x.text)),
    );
  });

  it('no measurable difference: nothing to change, whatever the rules say', () => {
    const orig = entry(bal, 3, undefined, 'bm-20250101-120000-000001');
    const cand = entry(high, 2, orig, 'bm-20250101-120000-000002');
    const r = recommend({ ...balancedInput(), comparison: [orig, cand] });
    assert.equal(r.changeRecommended, false);
    assert.match(r.summary, /^Nothing to change: no plan measured faster than Balanced/);
    // The rules' findings for a change are still listed, followed by why the advice does not follow them.
    assert.ok(r.reasons.some((x) => /minimum processor state/.test(x.text)));
    const last = r.reasons[r.reasons.length - 1]!;
    assert.deepEqual(last.fact, { name: 'outweighedBy', value: 'comparison' });
    assert.match(last.text, /point to High performance, but the comparison on this machine outweighs them/);
  });

  it('a benchmark with almost no penalty says why the settings do not decide', () => {
    const r = recommend({ ...balancedInput(), benchmark: benchmarkResult(2) });
    assert.equal(r.changeRecommended, false);
    assert.equal(r.reasons.at(-1)?.fact.name, 'outweighedBy');
  });

  it('a winning comparison adds no such reason', () => {
    const orig = entry(bal, 40, undefined, 'bm-20250101-120000-000001');
    const cand = entry(high, 0, orig, 'bm-20250101-120000-000002');
    const r = recommend({ ...balancedInput(), comparison: [orig, cand] });
    assert.equal(r.changeRecommended, true);
    assert.ok(!r.reasons.some((x) => x.fact.name === 'outweighedBy'));
  });

  it('Ultimate original: a faster-measured High performance is still not a recommended downgrade', () => {
    const ult = { id: win.ultimate.id, name: win.ultimate.name, kind: 'ultimate-performance' as const };
    const orig = entry(ult, 30, undefined, 'bm-20250101-120000-000001');
    const cand = entry(high, 0, orig, 'bm-20250101-120000-000002');
    const input = windowsInput([...stock, win.ultimate], win.ultimate.id, windowsSettings.performance());
    const r = recommend({ ...input, comparison: [orig, cand] });
    assert.equal(r.changeRecommended, false);
    assert.equal(r.recommended?.kind, 'ultimate-performance');
  });
});
