/**
 * The recommendation: a pure function of the system facts, the plans, the active plan's settings
 * and owner, an optional benchmark or comparison, and the workload. It puts the parts together:
 * the rules' target plan (`target.ts`), the evidence (`evidence.ts`), the caveats (`caveats.ts`),
 * the actions (`actions.ts`), worded from one table (`texts.ts`). The settings decide, not the
 * names; a measurement, when there is a trustworthy one, outweighs the rules.
 */
import type {
  AdviceBasis,
  AdviceCaveat,
  AdviceReason,
  Confidence,
  Recommendation,
  RecommendedPlan,
  Workload,
} from '../domain/advice.ts';
import type { Plan } from '../domain/schemas.ts';
import { actionsFor } from './actions.ts';
import { costCaveats, systemCaveats } from './caveats.ts';
import { fromEvidence } from './evidence.ts';
import { weighHalves } from './halves.ts';
import type { AdviceInput } from './input.ts';
import { readSettings } from './settings.ts';
import { fromRules, type Situation, toRecommended } from './target.ts';
import { TEXT } from './texts.ts';
import { fact, merge, type Verdict } from './verdict.ts';

const lower = (c: Confidence): Confidence => (c === 'high' ? 'medium' : 'low');

const basis = (input: AdviceInput): AdviceBasis => {
  if (input.comparison?.length) {
    return {
      kind: 'comparison',
      benchmarkIds: input.comparison.map((e) => e.benchmarkId),
      text: input.basisNote ?? TEXT.basis.comparison,
    };
  }
  if (input.benchmark) {
    return {
      kind: 'benchmark',
      benchmarkIds: [input.benchmark.id],
      text: input.basisNote ?? TEXT.basis.benchmark(input.benchmark.id),
    };
  }
  return { kind: 'rules', benchmarkIds: [], text: input.basisNote ?? TEXT.basis.rules };
};

/** Why nothing can change on a system that exposes no plan: a VM, the firmware, or nothing at all. */
const noPlanReason = ({ active, system }: AdviceInput): { reason: AdviceReason; summary: string } => {
  if (system.virtualization.detected || active.owner === 'hypervisor') {
    return {
      reason: fact('virtualization', system.virtualization.kind ?? 'detected', TEXT.reason.vmNoControls),
      summary: TEXT.summary.noPlanVm,
    };
  }
  if (active.owner === 'firmware') {
    return {
      reason: fact('owner', 'firmware', TEXT.reason.firmwareOwns),
      summary: TEXT.summary.noPlanFirmware,
    };
  }
  return { reason: fact('owner', active.owner, TEXT.reason.noPlanExposed), summary: TEXT.summary.noPlan };
};

const noPlanAdvice = (input: AdviceInput, caveats: AdviceCaveat[]): Recommendation => {
  const { active } = input;
  const { reason, summary } = noPlanReason(input);
  const halves = weighHalves(input);
  return {
    workload: input.workload,
    summary,
    recommended: null,
    changeRecommended: false,
    confidence: 'high',
    confidenceReason: TEXT.confidence.nothingToSwitch,
    reasons: [
      reason,
      ...(active.cannotSetReason
        ? [fact('cannotSetReason', active.cannotSetReason, active.cannotSetReason)]
        : []),
      ...halves.reasons,
    ],
    actions: [],
    // Nothing can be set here anyway, so missing rights are no caveat.
    caveats: caveats.filter((c) => c.kind !== 'rights'),
    basis: basis(input),
    halves: halves.halves,
  };
};

const summaryOf = (
  workload: Workload,
  current: Plan,
  target: RecommendedPlan | undefined,
  situation: Situation,
): string => {
  if (target?.installed) return TEXT.summary.switchTo(current, target, workload);
  if (target) return TEXT.summary.createAndSwitch(target, workload);
  if (situation === 'stuck') return TEXT.summary.noBetterPlan(current, workload);
  return TEXT.summary.alreadySuits(current, workload);
};

export const recommend = (input: AdviceInput): Recommendation => {
  const { active, workload } = input;
  const caveats = systemCaveats(input);
  const current = active.plan;
  if (!current) return noPlanAdvice(input, caveats);
  const reading = readSettings(active);

  const rules = fromRules(input, current, reading);
  const start: Verdict = {
    target: undefined,
    confidence: 'medium',
    confidenceReason: '',
    reasons: reading.findings,
    caveats,
    gains: [],
  };
  const ruled = merge(start, rules.part);
  // A VM's host decides the real clock, so a change promises less there.
  const weighed =
    input.system.virtualization.detected && ruled.target
      ? { ...ruled, confidence: lower(ruled.confidence) }
      : ruled;
  const evidence = fromEvidence(input, weighed.target, rules.situation);
  const measured = merge(weighed, evidence);
  const target = measured.target?.active ? undefined : measured.target;
  // The rules' reasons for a change stay listed; when a measurement says stay, one more says so,
  // so that the reasons never argue for a switch the advice does not make.
  const overruled =
    weighed.target && !weighed.target.active && !target && 'target' in evidence
      ? [
          fact(
            'outweighedBy',
            input.comparison?.length ? 'comparison' : 'benchmark',
            TEXT.reason.outweighed(weighed.target, input.comparison?.length ? 'comparison' : 'benchmark'),
          ),
        ]
      : [];
  const halves = weighHalves(input);
  // The cost at this server's own load, in its own words ("... the plan adds ~X% (Y-Z%)").
  const observed = input.observed
    ? [
        fact(
          'workloadCost.addedPercent',
          input.observed.estimate?.addedPercent ?? null,
          input.observed.summary,
        ),
      ]
    : [];
  const v = merge(measured, {
    reasons: [...halves.reasons, ...overruled, ...observed],
    caveats: [...costCaveats(input, target, current, reading.posture), ...halves.caveats],
    // Firmware or the hypervisor decides: a switch here promises less.
    ...(halves.uncontrollable && target ? { confidence: lower(measured.confidence) } : {}),
  });

  return {
    workload,
    summary: v.summary ?? summaryOf(workload, current, target, rules.situation),
    recommended: target ?? toRecommended(current),
    changeRecommended: target !== undefined,
    confidence: v.confidence,
    confidenceReason: v.confidenceReason,
    reasons: v.reasons,
    ...(v.gains.length ? { expectedGain: v.gains } : {}),
    actions: target
      ? actionsFor(target, {
          backend: input.system.backend,
          owner: active.owner,
          policyManaged: active.policyManaged,
        })
      : [],
    caveats: v.caveats,
    basis: basis(input),
    halves: halves.halves,
  };
};
