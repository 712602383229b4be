/**
 * The shapes of the advice (get_recommendation) and of the A/B plan comparison
 * (compare_power_plans). A public contract like `schemas.ts`: add fields, never rename them.
 */
import { z } from 'zod';
import { BenchmarkProfile, Stats } from './benchmark.ts';
import { PlanKind } from './schemas.ts';

export const workloads = ['database', 'batch', 'latency', 'energy-saving'] as const;
export const Workload = z.enum(workloads).meta({
  id: 'Workload',
  description:
    'What the machine is for: `database` (default: latency-sensitive OLTP plus maintenance such as index rebuilds and restores), ' +
    '`batch` (long CPU-bound jobs), `latency` (every millisecond of response time counts), `energy-saving` (power and heat matter more than speed).',
});
export type Workload = z.infer<typeof Workload>;

export const Confidence = z.enum(['high', 'medium', 'low']).meta({
  id: 'Confidence',
  description: 'How sure the advice is: high (settings and measurement agree), medium, low.',
});
export type Confidence = z.infer<typeof Confidence>;

export const RecommendedPlan = z
  .object({
    id: z
      .string()
      .describe(
        'Plan id (Windows GUID, tuned/PPD profile or governor id). For a plan that is not installed: the GUID of the template it is created from.',
      ),
    name: z
      .string()
      .describe('Display name (as the system reports it, or the usual name of a plan to create).'),
    kind: PlanKind,
    installed: z.boolean().describe('False when the plan must be created first (see `actions`).'),
    active: z.boolean().describe('True when this plan is already in force.'),
  })
  .meta({ id: 'RecommendedPlan', description: 'The plan the advice recommends being in.' });
export type RecommendedPlan = z.infer<typeof RecommendedPlan>;

export const AdviceFact = z
  .object({
    name: z
      .string()
      .describe('The fact, e.g. `minStatePercent.ac`, `virtualization`, `burstPenaltyPercent@1000ms`.'),
    value: z
      .union([z.string(), z.number(), z.boolean(), z.null()])
      .describe('Its value as read or measured on this system.'),
  })
  .meta({ id: 'AdviceFact', description: 'One fact about this system that a reason rests on.' });

export const AdviceReason = z
  .object({
    text: z.string().describe('The reason in one sentence, e.g. "minimum processor state is 5% on AC".'),
    fact: AdviceFact,
  })
  .meta({ id: 'AdviceReason' });
export type AdviceReason = z.infer<typeof AdviceReason>;

export const ExpectedGain = z
  .object({
    metric: z
      .enum(['burst-after-idle', 'single-thread', 'all-core'])
      .describe('What gets faster: short bursts after idle, sustained single-thread or all-core throughput.'),
    percent: z.number().describe('Expected improvement in % (median estimate; negative = a measured loss).'),
    low: z.number().describe('Lower end of the estimate (%), from the p10/p90 spread of the samples.'),
    high: z.number().describe('Upper end of the estimate (%).'),
    from: z.string().describe('Benchmark id(s) the estimate comes from.'),
    text: z.string().describe('The estimate in words.'),
  })
  .meta({ id: 'ExpectedGain', description: 'The gain a change should bring, as measured on this machine.' });
export type ExpectedGain = z.infer<typeof ExpectedGain>;

export const AdviceAction = z
  .object({
    via: z
      .enum([
        'rest',
        'cli',
        'powercfg',
        'powershell',
        'tuned-adm',
        'powerprofilesctl',
        'sysfs',
        'group-policy',
      ])
      .describe('The tool the command is for.'),
    description: z.string().describe('What the command does.'),
    command: z.string().describe('The exact command (or REST request line and body) to run.'),
    request: z
      .object({
        method: z.enum(['GET', 'PUT', 'POST']),
        path: z.string(),
        body: z.record(z.string(), z.unknown()).optional(),
      })
      .optional()
      .describe('For `rest`: the request as data.'),
  })
  .meta({ id: 'AdviceAction', description: 'One exact way to apply the advice.' });
export type AdviceAction = z.infer<typeof AdviceAction>;

export const AdviceCaveat = z
  .object({
    kind: z
      .enum([
        'power-heat',
        'battery',
        'group-policy',
        'vm-host',
        'firmware',
        'rights',
        'measurement',
        'edited-plan',
        'not-in-force',
      ])
      .describe('What the caveat is about.'),
    text: z.string(),
  })
  .meta({ id: 'AdviceCaveat' });
export type AdviceCaveat = z.infer<typeof AdviceCaveat>;

export const AdviceBasis = z
  .object({
    kind: z
      .enum(['rules', 'benchmark', 'comparison'])
      .describe(
        'Rules over the settings only, or also a benchmark under the active plan, or an A/B comparison.',
      ),
    benchmarkIds: z.array(z.string()).describe('The benchmark results used (empty for rules only).'),
    text: z.string().describe('Which evidence was used and why (e.g. why a stored benchmark was not).'),
  })
  .meta({ id: 'AdviceBasis' });
export type AdviceBasis = z.infer<typeof AdviceBasis>;

export const CostHalves = z
  .object({
    wakeUpUs: z
      .number()
      .nullable()
      .describe(
        'Measured wake-up cost per request (us): timer overshoot plus first-unit slowdown; null without a benchmark.',
      ),
    rampUs: z
      .number()
      .nullable()
      .describe(
        'Measured clock-ramp cost (us): the extra time of the first 1 ms unit after the longest idle gap.',
      ),
    publishedExitLatencyUs: z
      .number()
      .nullable()
      .describe('Published exit latency of the deepest idle state allowed here (us).'),
    dominant: z
      .enum(['idle', 'clock', 'both', 'neither', 'unknown'])
      .describe('Which half costs more: idle states (wake-up) or the clock (ramp).'),
    text: z.string().describe('The weighing in one sentence.'),
    settings: z
      .array(AdviceAction)
      .describe(
        'The settings to change on the side that costs more (idle disable / idle state maximum / PM QoS, or minimum processor state / EPP), and stock values to restore on an edited built-in plan, with the commands.',
      ),
  })
  .meta({
    id: 'CostHalves',
    description: 'Both halves of what a plan costs, weighed: idle-state wake-up against the clock ramp.',
  });
export type CostHalves = z.infer<typeof CostHalves>;

export const Recommendation = z
  .object({
    workload: Workload,
    summary: z
      .string()
      .describe('The advice in one sentence, e.g. "Nothing to change: ..." or "Switch to ...".'),
    recommended: RecommendedPlan.nullable().describe(
      'The plan to be in (the active plan when nothing should change); null when this system exposes no plan.',
    ),
    changeRecommended: z
      .boolean()
      .describe('True when the advice is to switch (or create and switch) plans.'),
    confidence: Confidence,
    confidenceReason: z.string().describe('Why the confidence is what it is.'),
    reasons: z.array(AdviceReason).describe('Each reason with the fact it rests on.'),
    expectedGain: z.array(ExpectedGain).optional().describe('Measured gains, present only when measured.'),
    actions: z
      .array(AdviceAction)
      .describe('Exact ways to apply the change; empty when nothing is to change.'),
    caveats: z
      .array(AdviceCaveat)
      .describe('Costs and limits: power and heat, battery, group policy, VM host, firmware.'),
    basis: AdviceBasis,
    halves: CostHalves.optional().describe(
      'The two halves of what the plan costs, weighed, with the setting to change on the costlier side.',
    ),
  })
  .meta({
    id: 'Recommendation',
    description: 'Advice on the power plan, explained by the settings and measurements.',
  });
export type Recommendation = z.infer<typeof Recommendation>;

export const PlanRefOut = z
  .object({ id: z.string(), name: z.string(), kind: PlanKind })
  .meta({ id: 'ComparedPlan', description: 'A plan taking part in a comparison.' });

export const NoiseVerdict = z
  .enum(['better', 'worse', 'within-noise', 'noisy'])
  .describe(
    'better / worse: the range [low, high] lies wholly above / below 0; within-noise: it touches or crosses 0; ' +
      'noisy: a run was flagged noisy, so the difference is not judged.',
  );
export type NoiseVerdict = z.infer<typeof NoiseVerdict>;

export const Difference = z
  .object({
    percent: z.number().describe('Change against the original plan in %, positive = better (faster).'),
    low: z.number().describe('Lower end (%) from the p10/p90 spread of both runs.'),
    high: z.number().describe('Upper end (%).'),
    verdict: NoiseVerdict,
    significant: z
      .boolean()
      .describe(
        'True when the verdict is better or worse: the range lies wholly on one side of 0 and neither run was noisy.',
      ),
  })
  .meta({ id: 'ComparisonDifference', description: 'A measured difference with its uncertainty.' });
export type Difference = z.infer<typeof Difference>;

export const ComparisonFigures = z
  .object({
    burstAfterIdleMs: Stats.describe('Burst time after the longest idle gap (ms; lower is better).'),
    idleGapMs: z.number().int().describe('That longest idle gap (ms).'),
    burstPenaltyPercent: z.number().describe('How much slower that burst ran than on a warm core (%).'),
    singleThreadMops: Stats.describe('Sustained single-thread throughput per time slice (Mops/s).'),
    allCoreMops: z.number().describe('Sustained all-core throughput (Mops/s).'),
    noisy: z.boolean().describe('True when any phase of the run was flagged noisy.'),
  })
  .meta({ id: 'ComparisonFigures' });
export type ComparisonFigures = z.infer<typeof ComparisonFigures>;

export const ComparisonEntry = z
  .object({
    plan: PlanRefOut,
    original: z.boolean().describe('True for the plan that was active before (and is active again).'),
    benchmarkId: z.string().describe('The stored benchmark result (get_benchmark shows every figure).'),
    figures: ComparisonFigures,
    difference: z
      .object({
        burstAfterIdle: Difference,
        singleThread: Difference,
        allCore: Difference,
      })
      .nullable()
      .describe('Against the original plan; null for the original itself.'),
  })
  .meta({ id: 'ComparisonEntry', description: 'One plan of the comparison, measured.' });
export type ComparisonEntry = z.infer<typeof ComparisonEntry>;

export const ComparisonResult = z
  .object({
    dryRun: z.boolean(),
    startedAt: z.string().describe('ISO 8601 start time.'),
    finishedAt: z.string().describe('ISO 8601 end time.'),
    profile: BenchmarkProfile,
    settleMs: z.number().int().describe('Wait after each switch before measuring (ms).'),
    original: PlanRefOut.describe('The plan active before the comparison.'),
    planned: z.array(PlanRefOut).describe('The plans measured (or, with dryRun, that would be), in order.'),
    restored: z
      .boolean()
      .describe(
        'True when the original plan is in force again at the end (always true unless the restore failed).',
      ),
    results: z.array(ComparisonEntry).describe('One entry per measured plan; empty for a dry run.'),
    recommendation: Recommendation.nullable().describe(
      'The advice that follows from the measurement; null for a dry run.',
    ),
    warnings: z.array(z.string()),
  })
  .meta({ id: 'ComparisonResult', description: 'An A/B comparison of power plans, measured and restored.' });
export type ComparisonResult = z.infer<typeof ComparisonResult>;
