/**
 * Turns benchmark figures into evidence: the figures of one run that a comparison reports, the
 * difference between two runs with its uncertainty (from the p10/p90 spread of both), and the gain
 * a single run under a power-saving plan predicts for a performance plan.
 */
import type { ComparisonFigures, Difference, ExpectedGain, NoiseVerdict } from '../domain/advice.ts';
import type { BenchmarkResult, Stats } from '../domain/benchmark.ts';

const round1 = (n: number) => Math.round(n * 10) / 10;

/** "1 s" or "200 ms": how the idle gaps read in a sentence. */
export const gapText = (ms: number): string =>
  ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;

export const figuresOf = (r: BenchmarkResult): ComparisonFigures => {
  const longest = r.phases.burstsAfterIdle[r.phases.burstsAfterIdle.length - 1];
  const warm = r.phases.warmBaseline.burstMs;
  return {
    burstAfterIdleMs: longest?.burstMs ?? warm,
    idleGapMs: longest?.idleGapMs ?? 0,
    burstPenaltyPercent: round1(longest?.penaltyPercent.value ?? 0),
    singleThreadMops: r.phases.sustainedSingle.slices,
    allCoreMops: r.phases.sustainedAllCore.throughput.value,
    noisy: r.summary.noisy,
  };
};

type Spread = Pick<Stats, 'median' | 'p10' | 'p90'>;

/**
 * Candidate against original in %, positive = better. The range pairs the worst case of one run
 * with the best case of the other, so it is wide on purpose: only a range clear of 0 counts.
 */
export const difference = (
  original: Spread,
  candidate: Spread,
  higherIsBetter: boolean,
  noisy: boolean,
): Difference => {
  const base = original.median;
  if (!(base > 0))
    return { percent: 0, low: 0, high: 0, verdict: noiseVerdict(0, 0, noisy), significant: false };
  const sign = higherIsBetter ? 1 : -1;
  const percent = (sign * (candidate.median - original.median) * 100) / base;
  const a = (sign * (candidate.p10 - original.p90) * 100) / base;
  const b = (sign * (candidate.p90 - original.p10) * 100) / base;
  const low = round1(Math.min(a, b));
  const high = round1(Math.max(a, b));
  const verdict = noiseVerdict(low, high, noisy);
  return {
    percent: round1(percent),
    low,
    high,
    verdict,
    significant: verdict === 'better' || verdict === 'worse',
  };
};

/**
 * The one rule that judges a difference, on the range as it is shown (rounded): a run flagged
 * noisy is not judged (`noisy`); otherwise a range wholly above 0 is `better`, wholly below 0
 * `worse`, and one that touches or crosses 0 is `within-noise`. Every text and table takes its
 * verdict from here, so a range that excludes 0 is never called "within the noise".
 */
export const noiseVerdict = (low: number, high: number, noisy: boolean): NoiseVerdict => {
  if (noisy) return 'noisy';
  if (low > 0) return 'better';
  if (high < 0) return 'worse';
  return 'within-noise';
};

/** All-core throughput as a spread: the total, with the per-thread p10/p90 scaled to all threads. */
export const allCoreSpread = (r: BenchmarkResult): Spread => {
  const ph = r.phases.sustainedAllCore;
  const total = ph.throughput.value;
  const scale = ph.perThread.median > 0 ? total / ph.perThread.median : ph.threads;
  return { median: total, p10: ph.perThread.p10 * scale, p90: ph.perThread.p90 * scale };
};

/** The burst penalty after the longest idle gap of a run, when it is trustworthy. */
export const longestPenalty = (
  r: BenchmarkResult,
): { gapMs: number; percent: number; p10: number; p90: number; noisy: boolean } | undefined => {
  const longest = r.phases.burstsAfterIdle[r.phases.burstsAfterIdle.length - 1];
  if (!longest) return undefined;
  return {
    gapMs: longest.idleGapMs,
    percent: round1(longest.penaltyPercent.value),
    p10: longest.penalty.p10,
    p90: longest.penalty.p90,
    noisy: longest.noisy || r.phases.warmBaseline.noisy,
  };
};

/**
 * What a performance plan should save on a burst after idle, if it removes the penalty: a burst
 * that took (1 + p) warm bursts would take one, so p / (1 + p) of its time goes.
 */
export const gainFromPenalty = (r: BenchmarkResult): ExpectedGain | undefined => {
  const pen = longestPenalty(r);
  if (!pen || pen.percent <= 0) return undefined;
  const saved = (ratio: number) => (ratio > 1 ? round1(((ratio - 1) / ratio) * 100) : 0);
  const percent = saved(1 + pen.percent / 100);
  return {
    metric: 'burst-after-idle',
    percent,
    low: saved(pen.p10),
    high: saved(pen.p90),
    from: r.id,
    text: `bursts after ${gapText(pen.gapMs)} idle should take about ${percent}% less time (range ${saved(pen.p10)}-${saved(pen.p90)}%) if a performance plan removes the ramp-up; measured under the current plan only`,
  };
};
