/** compare_power_plans: an A/B benchmark of power plans that always restores the original plan. */
import { z } from 'zod';
import { formatComparison } from '../advice/format.ts';
import { ComparisonResult, Workload } from '../domain/advice.ts';
import { defineOperation } from './define.ts';
import { benchmarkInput, PlanRef } from './inputs.ts';

export const MAX_SETTLE_MS = 60_000;

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
      settleMs: z
        .number()
        .int()
        .min(0)
        .max(MAX_SETTLE_MS)
        .default(3000)
        .describe(`Wait after each switch before measuring, in ms (0 to ${MAX_SETTLE_MS}, default 3000).`),
      ...benchmarkInput.shape,
      dryRun: z
        .boolean()
        .default(false)
        .describe('Say which plans would be compared, changing nothing and measuring nothing.'),
    })
    .strict(),
  output: ComparisonResult,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  scope: 'control',
  http: { method: 'POST', path: '/v1/comparisons' },
  cli: { command: ['compare'], format: formatComparison },
  handler: async (input, ctx) => ctx.comparisons.run(input, ctx),
});
