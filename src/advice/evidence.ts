/**
 * The evidence: what a comparison of the plans, or a benchmark under the plan in force, adds to
 * the rules' verdict. A trustworthy measurement outweighs the rules; a noisy one is never rested on.
 */
import type { ComparisonEntry, RecommendedPlan } from '../domain/advice.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import type { AdviceInput } from './input.ts';
import { gainFromPenalty, longestPenalty } from './measure.ts';
import { type Situation, toRecommended } from './target.ts';
import { TEXT } from './texts.ts';
import { fact, type Part } from './verdict.ts';

/** Penalties (%) after the longest idle gap: above `clear` a change pays, below `none` it does not. */
const PENALTY_CLEAR = 10;
const PENALTY_NONE = 5;

/** Picks the plan a comparison measured best for the workload, if it beat the original beyond the noise. */
const fromComparison = (
  input: AdviceInput,
  target: RecommendedPlan | undefined,
  entries: readonly ComparisonEntry[],
): Part => {
  const original = entries.find((e) => e.original);
  if (!original) return {};
  const metric = input.workload === 'batch' ? 'singleThread' : 'burstAfterIdle';
  const metricText =
    metric === 'singleThread'
      ? TEXT.metric.singleThread
      : TEXT.metric.burstAfterIdle(original.figures.idleGapMs);
  // Ultimate Performance is never "downgraded" to High performance, whatever was measured.
  const noDowngrade = original.plan.kind === 'ultimate-performance';
  const others = entries.filter(
    (e) => !e.original && e.difference && !(noDowngrade && e.plan.kind === 'high-performance'),
  );
  const reasons = others.map((e) => {
    const d = e.difference![metric];
    return fact(
      `${metric}@${e.plan.id}`,
      d.percent,
      TEXT.reason.compared(metricText, d, e.plan, original.plan),
    );
  });
  if (input.workload === 'energy-saving') {
    const measured = target && others.some((e) => e.plan.id === target.id);
    return measured
      ? { reasons, confidence: 'high', confidenceReason: TEXT.confidence.costMeasured }
      : { reasons };
  }
  const best = others
    .filter((e) => e.difference![metric].verdict === 'better')
    .sort((a, b) => b.difference![metric].percent - a.difference![metric].percent)[0];
  if (!best) {
    const noisy = original.figures.noisy || others.some((e) => e.figures.noisy);
    return {
      reasons,
      target: undefined,
      confidence: noisy ? 'low' : 'medium',
      confidenceReason: TEXT.confidence.comparisonNoWinner,
      summary: TEXT.summary.noFasterMeasured(original.plan, input.workload),
    };
  }
  const d = best.difference![metric];
  const plan = input.plans.find((p) => p.id === best.plan.id);
  return {
    reasons,
    target: plan ? toRecommended(plan) : { ...best.plan, installed: true, active: false },
    confidence: 'high',
    confidenceReason: TEXT.confidence.comparisonWon(best.plan, original.plan),
    gains: [
      {
        metric: metric === 'singleThread' ? 'single-thread' : 'burst-after-idle',
        percent: d.percent,
        low: d.low,
        high: d.high,
        from: `${original.benchmarkId} vs ${best.benchmarkId}`,
        text: TEXT.reason.comparedGain(metricText, d, best.plan),
      },
    ],
  };
};

/** Weighs a benchmark run under the active plan against the rules' verdict. */
const fromBenchmark = (
  input: AdviceInput,
  target: RecommendedPlan | undefined,
  r: BenchmarkResult,
  situation: Situation,
): Part => {
  const pen = longestPenalty(r);
  if (!pen) return {};
  if (pen.noisy) return { caveats: [{ kind: 'measurement', text: TEXT.caveat.noisy(r.id) }] };
  const penalty = (text: (gapMs: number, percent: number) => string) =>
    fact(`burstPenaltyPercent@${pen.gapMs}ms`, pen.percent, text(pen.gapMs, pen.percent));
  if (input.workload === 'energy-saving') return { reasons: [penalty(TEXT.reason.penaltyUnderCurrent)] };
  const vm = input.system.virtualization.detected;

  if (situation === 'keep' && pen.percent < PENALTY_CLEAR) {
    return {
      reasons: [penalty(TEXT.reason.penaltyHeldUp)],
      confidence: 'high',
      confidenceReason: TEXT.confidence.benchmarkAgreesKeep,
    };
  }
  if (situation === 'keep') {
    return {
      reasons: [penalty(TEXT.reason.penaltyPersists)],
      caveats: [
        vm
          ? { kind: 'vm-host', text: TEXT.caveat.penaltyFromHost }
          : { kind: 'firmware', text: TEXT.caveat.penaltyFromBios },
      ],
      confidence: 'medium',
      confidenceReason: TEXT.confidence.penaltyPersists,
    };
  }
  if (!target) return {};
  if (pen.percent < PENALTY_NONE) {
    return {
      reasons: [penalty(TEXT.reason.penaltyLittle)],
      target: undefined,
      confidence: 'medium',
      confidenceReason: TEXT.confidence.littlePenalty,
      summary: TEXT.summary.noPenaltyMeasured(input.active.plan?.name ?? 'the current plan', pen.percent),
    };
  }
  const clear = pen.percent >= PENALTY_CLEAR;
  const gain = gainFromPenalty(r);
  return {
    reasons: [penalty(TEXT.reason.penalty)],
    gains: gain ? [gain] : [],
    confidence: clear && !vm ? 'high' : 'medium',
    confidenceReason: clear ? TEXT.confidence.clearPenalty : TEXT.confidence.smallPenalty,
  };
};

/** What the measurement at hand (a comparison first, else a benchmark) adds to the verdict. */
export const fromEvidence = (
  input: AdviceInput,
  target: RecommendedPlan | undefined,
  situation: Situation,
): Part => {
  if (input.comparison?.length) return fromComparison(input, target, input.comparison);
  if (input.benchmark) return fromBenchmark(input, target, input.benchmark, situation);
  return {};
};
