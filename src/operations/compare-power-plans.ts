/** compare_power_plans: an A/B benchmark of power plans that always restores the original plan. */
import { z } from 'zod';
import { formatComparison } from '../advice/format.ts';
import { MAX_THREADS } from '../bench/service.ts';
import { ComparisonResult, Workload } from '../domain/advice.ts';
import { BenchmarkProfile } from '../domain/benchmark.ts';
import { runComparison } from '../services/compare.ts';
import { defineOperation } from './define.ts';
import { PlanRef } from './set-power-plan.ts';

export const MAX_SETTLE_MS = 60_000;

/** The CLI passes a list as one flag value: `a,b`. */
export const comparePowerPlans = defineOperation({
  name: 'compare_power_plans',
  title: 'Compare power plans (A/B benchmark)',
  description:
    'Measures which plan is faster on this machine: for each plan it switches to it, waits the settle time, runs ' +
    'the CPU benchmark, and at the end puts the original plan back. The original plan is always restored: on ' +
    'success, error, timeout, cancellation and shutdown; a restore journal in the state directory brings it back ' +
    'at the next start even after a crash. Default plans: the active plan and the best performance plan ' +
    'installed (or Balanced when a performance plan is active). Answers per plan the figures and the difference ' +
    'against the original with its uncertainty, and the recommendation that follows. It changes the active plan ' +
    'for a while and loads every CPU during each run: try dryRun: true first and avoid peak hours. One comparison ' +
    'or plan change at a time (409 otherwise).',
  input: z
    .object({
      plans: z
        .array(PlanRef)
        .min(1)
        .max(4)
        .optional()
        .describe(
          'Plans to compare with the active one (ids, kind aliases or exact names; 1 to 4; in the CLI comma-separated: --plans high-performance,balanced). Default: the best performance plan installed.',
        ),
      workload: Workload.default('database').describe(
        'Workload the recommendation is for (default database).',
      ),
      profile: BenchmarkProfile.default('quick').describe(
        'Benchmark profile per plan: quick (default, ~5 s) or standard (~20 s).',
      ),
      settleMs: z
        .number()
        .int()
        .min(0)
        .max(MAX_SETTLE_MS)
        .default(3000)
        .describe(`Wait after each switch before measuring, in ms (0 to ${MAX_SETTLE_MS}, default 3000).`),
      threads: z
        .number()
        .int()
        .min(1)
        .max(MAX_THREADS)
        .optional()
        .describe('Threads of the all-core phase; default: the number of logical CPUs.'),
      idleGapsMs: z
        .array(z.number().int().min(0).max(5000))
        .min(1)
        .max(8)
        .optional()
        .describe("Replace the profile's idle gaps (ms, each 0 to 5000, at most 8)."),
      force: z
        .boolean()
        .default(false)
        .describe('Run even when the CPU is already busy (the benchmark refuses above 30% busy).'),
      dryRun: z
        .boolean()
        .default(false)
        .describe('Say which plans would be compared, changing nothing and measuring nothing.'),
    })
    .strict(),
  output: ComparisonResult,
  annotations: { readOnly: false, destructive: true, idempotent: false },
  scope: 'control',
  http: { method: 'POST', path: '/v1/comparisons' },
  cli: { command: ['compare'], format: formatComparison },
  handler: async (input, ctx) => runComparison(input, ctx),
});
