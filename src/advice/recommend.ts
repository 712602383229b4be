/**
 * The recommendation rules: a pure function of the system facts, the plans, the active plan's
 * settings and owner, an optional benchmark or comparison, and the workload. The settings decide,
 * not the names; a measurement, when there is a trustworthy one, outweighs the rules.
 */
import type {
  AdviceBasis,
  AdviceCaveat,
  AdviceReason,
  ComparisonEntry,
  Confidence,
  ExpectedGain,
  Recommendation,
  RecommendedPlan,
  Workload,
} from '../domain/advice.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import type {
  ActivePlan,
  BackendName,
  Capabilities,
  Plan,
  PlanKind,
  PowerSource,
  Virtualization,
} from '../domain/schemas.ts';
import { SCHEME } from '../platform/windows/well-known.ts';
import { actionsFor } from './actions.ts';
import { gainFromPenalty, gapText, longestPenalty } from './measure.ts';
import { readSettings } from './settings.ts';

export interface SystemFacts {
  backend: BackendName;
  virtualization: Virtualization;
  powerSource: PowerSource;
  capabilities: Capabilities;
}

export interface AdviceInput {
  workload: Workload;
  system: SystemFacts;
  plans: readonly Plan[];
  active: ActivePlan;
  /** A benchmark run under the active plan, when one is recent enough to rest on. */
  benchmark?: BenchmarkResult;
  /** The plans of a comparison, measured; the original (the active plan) has `difference: null`. */
  comparison?: readonly ComparisonEntry[];
  /** Why a stored benchmark was or was not used; becomes `basis.text`. */
  basisNote?: string;
}

/** Penalties (%) after the longest idle gap: above `clear` a change pays, below `none` it does not. */
const PENALTY_CLEAR = 10;
const PENALTY_NONE = 5;

const performanceKinds: readonly PlanKind[] = ['ultimate-performance', 'high-performance'];

const toRecommended = (p: Plan): RecommendedPlan => ({
  id: p.id,
  name: p.name,
  kind: p.kind,
  installed: true,
  active: p.active,
});

const lower = (c: Confidence): Confidence => (c === 'high' ? 'medium' : 'low');

/** The performance plan to move to: installed first (by workload), else one that can be created. */
const pickPerformance = (input: AdviceInput): RecommendedPlan | undefined => {
  const candidates = input.plans.filter((p) => !p.active && performanceKinds.includes(p.kind));
  const order: PlanKind[] =
    input.workload === 'latency'
      ? ['ultimate-performance', 'high-performance']
      : ['high-performance', 'ultimate-performance'];
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
  const { backend, capabilities } = input.system;
  if (!capabilities.createPlan || (backend !== 'windows' && backend !== 'simulated')) return undefined;
  return input.workload === 'latency'
    ? {
        id: SCHEME.ultimateTemplate,
        name: 'Ultimate Performance',
        kind: 'ultimate-performance',
        installed: false,
        active: false,
      }
    : {
        id: SCHEME.highPerformance,
        name: 'High performance',
        kind: 'high-performance',
        installed: false,
        active: false,
      };
};

const pickBalanced = (input: AdviceInput): RecommendedPlan | undefined => {
  const balanced = input.plans.filter((p) => !p.active && p.kind === 'balanced');
  const plan = balanced.find((p) => p.builtin) ?? balanced[0];
  return plan ? toRecommended(plan) : undefined;
};

const systemCaveats = (input: AdviceInput): AdviceCaveat[] => {
  const { active, system } = input;
  const out: AdviceCaveat[] = [];
  if (system.virtualization.detected) {
    out.push({
      kind: 'vm-host',
      text: `This is a virtual machine (${system.virtualization.kind ?? 'unknown hypervisor'}): the hypervisor host's power policy and BIOS decide the real clock; set the host to a performance plan as well, or the guest's plan changes little.`,
    });
  }
  if (active.policyManaged) {
    out.push({
      kind: 'group-policy',
      text: 'Group policy sets the power plan here: a change made on this machine is reverted at the next policy refresh; change the policy instead.',
    });
  }
  if (!active.canSet) {
    out.push({
      kind: 'rights',
      text: `This service cannot change the plan now: ${active.cannotSetReason ?? 'not allowed here'}`,
    });
  }
  if (active.owner === 'firmware') {
    out.push({
      kind: 'firmware',
      text: 'The firmware owns power management here (e.g. pcc-cpufreq or BIOS-controlled P-states): change the BIOS power profile, not the OS plan.',
    });
  }
  if (system.powerSource === 'battery') {
    out.push({
      kind: 'battery',
      text: 'This machine runs on battery now: a performance plan drains it much faster; plans keep separate values for battery (DC).',
    });
  }
  return out;
};

const performanceCaveats = (input: AdviceInput): AdviceCaveat[] => [
  {
    kind: 'power-heat',
    text: 'A performance plan keeps the cores at a high clock also while they wait: more power draw and heat, which on a large server shows on the power bill.',
  },
  ...(input.system.powerSource !== 'battery'
    ? [
        {
          kind: 'battery' as const,
          text: 'On a laptop running on battery a performance plan drains it faster; the advice is for machines on mains power.',
        },
      ]
    : []),
  ...(!input.system.virtualization.detected
    ? [
        {
          kind: 'firmware' as const,
          text: "If the BIOS keeps power management to itself (not 'OS control'), the OS plan has less effect: set the BIOS power profile to OS control or maximum performance.",
        },
      ]
    : []),
];

interface Verdict {
  target: RecommendedPlan | undefined;
  change: boolean;
  confidence: Confidence;
  confidenceReason: string;
  reasons: AdviceReason[];
  caveats: AdviceCaveat[];
  gains: ExpectedGain[];
  summary?: string;
}

const fact = (name: string, value: string | number | boolean | null, text: string): AdviceReason => ({
  text,
  fact: { name, value },
});

/** Picks the plan a comparison measured best for the workload, if it beat the original beyond the noise. */
const fromComparison = (input: AdviceInput, v: Verdict, entries: readonly ComparisonEntry[]): void => {
  const original = entries.find((e) => e.original);
  if (!original) return;
  const metric = input.workload === 'batch' ? 'singleThread' : 'burstAfterIdle';
  const metricText =
    metric === 'singleThread'
      ? 'sustained single-thread throughput'
      : `bursts after ${gapText(original.figures.idleGapMs)} idle`;
  const noDowngrade = original.plan.kind === 'ultimate-performance';
  const others = entries.filter(
    (e) => !e.original && e.difference && !(noDowngrade && e.plan.kind === 'high-performance'),
  );
  const performance = input.workload !== 'energy-saving';
  for (const e of others) {
    const d = e.difference![metric];
    v.reasons.push(
      fact(
        `${metric}@${e.plan.id}`,
        d.percent,
        `${metricText} ran ${Math.abs(d.percent)}% ${d.percent >= 0 ? 'faster' : 'slower'} under ${e.plan.name} than under ${original.plan.name} (range ${d.low}..${d.high}%${d.significant ? '' : ', within the noise'})`,
      ),
    );
  }
  if (!performance) {
    const measured = v.target && others.find((e) => e.plan.id === v.target!.id);
    if (measured) {
      v.confidence = 'high';
      v.confidenceReason = 'The settings call for a change and the comparison measured what it costs.';
    }
    return;
  }
  const winners = others
    .filter((e) => e.difference![metric].significant && e.difference![metric].percent > 0)
    .sort((a, b) => b.difference![metric].percent - a.difference![metric].percent);
  const best = winners[0];
  if (best) {
    const d = best.difference![metric];
    const plan = input.plans.find((p) => p.id === best.plan.id);
    v.target = plan ? toRecommended(plan) : { ...best.plan, installed: true, active: false };
    v.change = !v.target.active;
    v.confidence = 'high';
    v.confidenceReason = `Measured on this machine: ${best.plan.name} beat ${original.plan.name} beyond the spread of both runs.`;
    v.gains.push({
      metric: metric === 'singleThread' ? 'single-thread' : 'burst-after-idle',
      percent: d.percent,
      low: d.low,
      high: d.high,
      from: `${original.benchmarkId} vs ${best.benchmarkId}`,
      text: `${metricText} ${d.percent}% faster (range ${d.low}..${d.high}%) under ${best.plan.name}`,
    });
    return;
  }
  v.target = undefined;
  v.change = false;
  v.confidence = others.some((e) => e.figures.noisy) || original.figures.noisy ? 'low' : 'medium';
  v.confidenceReason =
    'Measured on this machine: no other plan beat the original beyond the noise; a longer (standard) comparison could still show a small difference.';
  v.summary = `Nothing to change: no plan measured faster than ${original.plan.name} for the ${input.workload} workload beyond the noise.`;
};

/** Weighs a benchmark run under the active plan against the rules' verdict. */
const fromBenchmark = (input: AdviceInput, v: Verdict, r: BenchmarkResult, keep: boolean): void => {
  const pen = longestPenalty(r);
  if (!pen) return;
  const what = `burstPenaltyPercent@${pen.gapMs}ms`;
  if (pen.noisy) {
    v.caveats.push({
      kind: 'measurement',
      text: `Benchmark ${r.id} was too noisy to rest advice on; run it again when the machine is quieter.`,
    });
    return;
  }
  if (input.workload === 'energy-saving') {
    v.reasons.push(
      fact(
        what,
        pen.percent,
        `bursts after ${gapText(pen.gapMs)} idle ran ${pen.percent}% slower than warm under the current plan`,
      ),
    );
    return;
  }
  if (keep) {
    if (pen.percent < PENALTY_CLEAR) {
      v.reasons.push(
        fact(
          what,
          pen.percent,
          `bursts after ${gapText(pen.gapMs)} idle ran only ${pen.percent}% slower than warm: the plan holds the clock up`,
        ),
      );
      v.confidence = 'high';
      v.confidenceReason = 'The settings and a benchmark under this plan agree.';
    } else {
      v.reasons.push(
        fact(
          what,
          pen.percent,
          `bursts after ${gapText(pen.gapMs)} idle still ran ${pen.percent}% slower than warm under this performance plan`,
        ),
      );
      v.caveats.push({
        kind: input.system.virtualization.detected ? 'vm-host' : 'firmware',
        text: input.system.virtualization.detected
          ? "The burst penalty persists under a performance plan: the hypervisor host's power policy causes it; change the host."
          : "The burst penalty persists under a performance plan: the BIOS (C-states, 'energy efficient' profiles) causes it; check the firmware power settings.",
      });
      v.confidence = 'medium';
      v.confidenceReason =
        'No better plan exists here, but the measurement shows a penalty the plan does not remove.';
    }
    return;
  }
  if (!v.target) return;
  if (pen.percent < PENALTY_NONE) {
    v.reasons.push(
      fact(
        what,
        pen.percent,
        `bursts after ${gapText(pen.gapMs)} idle ran only ${pen.percent}% slower than warm: the current plan costs little on this machine`,
      ),
    );
    v.change = false;
    v.confidence = 'medium';
    v.confidenceReason =
      'The settings suggest a performance plan, but the benchmark under the current plan found almost no penalty; compare_power_plans can measure both.';
    v.summary = `Nothing to change measured: ${input.active.plan?.name ?? 'the current plan'} showed almost no burst penalty on this machine (${pen.percent}%).`;
    v.target = undefined;
    return;
  }
  v.reasons.push(
    fact(what, pen.percent, `bursts after ${gapText(pen.gapMs)} idle ran ${pen.percent}% slower than warm`),
  );
  const gain = gainFromPenalty(r);
  if (gain) v.gains.push(gain);
  v.confidence =
    pen.percent >= PENALTY_CLEAR ? (input.system.virtualization.detected ? 'medium' : 'high') : 'medium';
  v.confidenceReason =
    pen.percent >= PENALTY_CLEAR
      ? 'The settings and a benchmark under the current plan agree: bursts after idle pay a clear penalty.'
      : 'A benchmark under the current plan shows a small penalty.';
};

const noPlanAdvice = (input: AdviceInput, caveats: AdviceCaveat[]): Recommendation => {
  const { active, system } = input;
  const reasons: AdviceReason[] = [];
  let summary: string;
  if (system.virtualization.detected || active.owner === 'hypervisor') {
    reasons.push(
      fact(
        'virtualization',
        system.virtualization.kind ?? 'detected',
        "virtual machine: the host's policy decides the CPU clock; this guest exposes no power controls",
      ),
    );
    summary =
      "Nothing to change here: this virtual machine exposes no power plan; the hypervisor host's power policy decides.";
  } else if (active.owner === 'firmware') {
    reasons.push(fact('owner', 'firmware', 'the firmware owns power management; the OS exposes no plan'));
    summary = 'Nothing to change here: the firmware owns power management; change the BIOS power profile.';
  } else {
    reasons.push(fact('owner', active.owner, 'this system exposes no power plan'));
    summary = 'Nothing to change here: this system exposes no power plan.';
  }
  if (active.cannotSetReason)
    reasons.push(fact('cannotSetReason', active.cannotSetReason, active.cannotSetReason));
  return {
    workload: input.workload,
    summary,
    recommended: null,
    changeRecommended: false,
    confidence: 'high',
    confidenceReason: 'There is nothing on this system to switch.',
    reasons,
    actions: [],
    caveats: caveats.filter((c) => c.kind !== 'rights'),
    basis: basis(input),
  };
};

const basis = (input: AdviceInput): AdviceBasis => {
  if (input.comparison?.length) {
    return {
      kind: 'comparison',
      benchmarkIds: input.comparison.map((e) => e.benchmarkId),
      text: input.basisNote ?? 'An A/B comparison of the plans, measured on this machine just now.',
    };
  }
  if (input.benchmark) {
    return {
      kind: 'benchmark',
      benchmarkIds: [input.benchmark.id],
      text: input.basisNote ?? `Benchmark ${input.benchmark.id} under the active plan, plus the rules.`,
    };
  }
  return {
    kind: 'rules',
    benchmarkIds: [],
    text: input.basisNote ?? 'Rules over the settings only; nothing measured.',
  };
};

export const recommend = (input: AdviceInput): Recommendation => {
  const { active, workload } = input;
  const caveats = systemCaveats(input);
  if (!active.plan) return noPlanAdvice(input, caveats);
  const current = active.plan;
  const reading = readSettings(active);
  const performance = workload !== 'energy-saving';

  const keepPerformance = current.kind === 'ultimate-performance' || reading.posture === 'performance';
  const keep = performance
    ? keepPerformance
    : reading.posture === 'balanced' || reading.posture === 'power-saving' || reading.posture === 'unknown';
  const target = keep ? undefined : performance ? pickPerformance(input) : pickBalanced(input);

  const v: Verdict = {
    target,
    change: target !== undefined,
    confidence: 'medium',
    confidenceReason: '',
    reasons: [...reading.findings],
    caveats,
    gains: [],
  };
  if (keep) {
    v.confidence = reading.decisive || current.kind === 'ultimate-performance' ? 'high' : 'medium';
    v.confidenceReason = reading.decisive
      ? 'The settings in force decide this; rules only.'
      : 'Only the plan kind is known, not its settings; rules only.';
    if (performance && current.kind === 'ultimate-performance') {
      v.reasons.push(
        fact(
          'plan.kind',
          current.kind,
          'Ultimate Performance is already the most performance-oriented plan; High performance would be a step down',
        ),
      );
    } else if (performance && current.kind === 'custom') {
      v.reasons.push(
        fact(
          'plan.kind',
          'custom',
          `the custom plan ${current.name} already behaves like a performance plan: its settings decide, not its name`,
        ),
      );
    }
  } else if (target) {
    const severe = reading.decisive && reading.posture === 'power-saving';
    v.confidence = severe ? 'high' : 'medium';
    v.confidenceReason = severe
      ? 'The settings in force hold the CPU back beyond doubt; rules only.'
      : 'The settings let the clock fall while idle, which slows bursts of work; not measured here (run a benchmark or compare_power_plans to confirm).';
    if (!target.installed) {
      v.reasons.push(
        fact(
          'installedPerformancePlans',
          0,
          `no ${target.kind} plan is installed; it can be created from the Windows template ${target.id}`,
        ),
      );
    }
  } else {
    v.confidence = 'medium';
    v.confidenceReason = 'No better plan exists on this system and none can be created.';
    const warning = active.notes?.find((n) => n.code === 'no-performance-profile')?.text;
    v.reasons.push(
      fact(
        'performancePlanAvailable',
        false,
        warning ??
          `no ${performance ? 'performance' : 'balanced'} plan exists here and this system cannot create one`,
      ),
    );
    if (performance) {
      v.caveats.push({
        kind: 'firmware',
        text: 'Without a performance profile the CPU clock is left to the firmware or the cpufreq driver: check the BIOS power profile and that a cpufreq driver (intel_pstate, amd-pstate) is loaded.',
      });
    }
  }
  if (input.system.virtualization.detected && v.change) v.confidence = lower(v.confidence);

  if (input.comparison?.length) fromComparison(input, v, input.comparison);
  else if (input.benchmark) fromBenchmark(input, v, input.benchmark, keep);

  const finalTarget = v.change ? v.target : undefined;
  if (finalTarget && performance) v.caveats.push(...performanceCaveats(input));
  if (finalTarget && !performance) {
    v.caveats.push({
      kind: 'power-heat',
      text: 'A balanced plan saves power and heat while idle, at the cost of slower bursts of work after idle (response times may rise).',
    });
  }
  if (!finalTarget && !performance && reading.posture === 'power-saving') {
    v.caveats.push({
      kind: 'power-heat',
      text: `${current.name} saves the most energy but caps or slows the CPU under load as well; Balanced saves almost as much while idle.`,
    });
  }
  const recommended = finalTarget ?? toRecommended(current);
  const summary =
    v.summary ??
    (finalTarget
      ? finalTarget.installed
        ? `Switch from ${current.name} to ${finalTarget.name} (${finalTarget.id}) for the ${workload} workload.`
        : `Create the ${finalTarget.name} plan (it is not installed here) and switch to it for the ${workload} workload.`
      : target === undefined && !keep
        ? `Nothing this service can change: no better plan than ${current.name} exists here for the ${workload} workload.`
        : `Nothing to change: ${current.name} already suits the ${workload} workload.`);
  return {
    workload,
    summary,
    recommended,
    changeRecommended: finalTarget !== undefined,
    confidence: v.confidence,
    confidenceReason: v.confidenceReason,
    reasons: v.reasons,
    ...(v.gains.length ? { expectedGain: v.gains } : {}),
    actions: finalTarget
      ? actionsFor(finalTarget, {
          backend: input.system.backend,
          owner: active.owner,
          policyManaged: active.policyManaged,
        })
      : [],
    caveats: v.caveats,
    basis: basis(input),
  };
};
