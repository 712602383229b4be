/**
 * The rules on the target plan: from the settings in force and the workload, keep the plan, move
 * to a better one (installed, or one the backend can create), or say that no better plan exists.
 * Plans are judged by their kind and settings, never by their ids.
 */
import type { AdviceReason, RecommendedPlan } from '../domain/advice.ts';
import type { Plan, PlanKind } from '../domain/schemas.ts';
import { type AdviceInput, isPerformanceWorkload } from './input.ts';
import type { SettingsReading } from './settings.ts';
import { TEXT } from './texts.ts';
import { fact, type Part } from './verdict.ts';

/** What the rules say: keep the plan in force, change to the target, or stuck (no better plan exists). */
export type Situation = 'keep' | 'change' | 'stuck';

export interface RulesVerdict {
  situation: Situation;
  part: Part;
}

export const toRecommended = (p: Plan): RecommendedPlan => ({
  id: p.id,
  name: p.name,
  kind: p.kind,
  installed: true,
  active: p.active,
});

/** The performance kinds in the order the workload prefers them. */
const performanceOrder = (input: AdviceInput): PlanKind[] =>
  input.workload === 'latency'
    ? ['ultimate-performance', 'high-performance']
    : ['high-performance', 'ultimate-performance'];

/** The performance plan to move to: installed first (by workload), else one the backend can create. */
const pickPerformance = (input: AdviceInput): RecommendedPlan | undefined => {
  const order = performanceOrder(input);
  const candidates = input.plans.filter((p) => !p.active && order.includes(p.kind));
  const ranked = [...candidates].sort((a, b) => {
    const k = order.indexOf(a.kind) - order.indexOf(b.kind);
    if (k) return k;
    if (input.workload === 'latency') {
      const l = Number(/latency/.test(b.id)) - Number(/latency/.test(a.id));
      if (l) return l;
    }
    return Number(b.builtin) - Number(a.builtin);
  });
  if (ranked[0]) return toRecommended(ranked[0]);
  const creatable = order.flatMap((kind) => input.system.templates.filter((t) => t.kind === kind));
  return creatable[0] && { ...creatable[0], installed: false, active: false };
};

const pickBalanced = (input: AdviceInput): RecommendedPlan | undefined => {
  const balanced = input.plans.filter((p) => !p.active && p.kind === 'balanced');
  const plan = balanced.find((p) => p.builtin) ?? balanced[0];
  return plan ? toRecommended(plan) : undefined;
};

/** Whether the plan in force already suits the workload. */
const suits = (input: AdviceInput, current: Plan, reading: SettingsReading): boolean =>
  isPerformanceWorkload(input)
    ? current.kind === 'ultimate-performance' || reading.posture === 'performance'
    : reading.posture !== 'performance';

/** Why a performance plan in force stays, when its kind says more than its settings. */
const kindReasons = (input: AdviceInput, current: Plan): AdviceReason[] => {
  if (!isPerformanceWorkload(input)) return [];
  if (current.kind === 'ultimate-performance')
    return [fact('plan.kind', current.kind, TEXT.reason.ultimateIsTop)];
  if (current.kind === 'custom')
    return [fact('plan.kind', 'custom', TEXT.reason.customActsAsPerformance(current))];
  return [];
};

const keepPart = (input: AdviceInput, current: Plan, reading: SettingsReading): Part => ({
  confidence: reading.decisive || current.kind === 'ultimate-performance' ? 'high' : 'medium',
  confidenceReason: reading.decisive ? TEXT.confidence.settingsDecide : TEXT.confidence.kindOnly,
  reasons: kindReasons(input, current),
});

const changePart = (target: RecommendedPlan, reading: SettingsReading): Part => {
  const severe = reading.decisive && reading.posture === 'power-saving';
  return {
    target,
    confidence: severe ? 'high' : 'medium',
    confidenceReason: severe ? TEXT.confidence.heldBack : TEXT.confidence.clockFalls,
    reasons: target.installed ? [] : [fact('installedPerformancePlans', 0, TEXT.reason.notInstalled(target))],
  };
};

const stuckPart = (input: AdviceInput): Part => {
  const performance = isPerformanceWorkload(input);
  const why = input.active.notes?.find((n) => n.code === 'no-performance-profile')?.text;
  return {
    confidence: 'medium',
    confidenceReason: TEXT.confidence.noBetterPlan,
    reasons: [fact('performancePlanAvailable', false, why ?? TEXT.reason.noPlanOfKind(performance))],
    caveats: performance ? [{ kind: 'firmware', text: TEXT.caveat.noPerformanceProfile }] : [],
  };
};

/** The rules' first verdict on the plan in force, before any measurement. */
export const fromRules = (input: AdviceInput, current: Plan, reading: SettingsReading): RulesVerdict => {
  if (suits(input, current, reading)) return { situation: 'keep', part: keepPart(input, current, reading) };
  const target = isPerformanceWorkload(input) ? pickPerformance(input) : pickBalanced(input);
  if (target) return { situation: 'change', part: changePart(target, reading) };
  return { situation: 'stuck', part: stuckPart(input) };
};
