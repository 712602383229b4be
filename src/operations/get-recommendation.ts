/** get_recommendation: advice on the power plan for a workload, from the settings and, when there is one, a benchmark. */
import { z } from 'zod';
import { formatRecommendation } from '../advice/format.ts';
import { Recommendation, Workload } from '../domain/advice.ts';
import { advise } from '../services/recommendation.ts';
import { defineOperation, readOnly } from './define.ts';

export const getRecommendation = defineOperation({
  name: 'get_recommendation',
  title: 'Recommend a power plan',
  description:
    'Advises which power plan suits a workload on this machine and why: each reason cites the setting or ' +
    'measurement it rests on (e.g. "minimum processor state is 5% on AC"), with a confidence, the measured ' +
    'gain when there is a benchmark, the exact commands to apply it (REST, CLI, powercfg/PowerShell, tuned-adm, ' +
    'powerprofilesctl) and the caveats (power and heat, battery, group policy, VM host, firmware). Says ' +
    '"nothing to change" when that is the truth. By default (benchmark=latest) it uses a benchmark of the last 24 h ' +
    'that ran under the active plan, otherwise the rules alone, and says which in `basis`. It never runs a ' +
    'benchmark itself: to measure now, run run_cpu_benchmark first, then ask again. Changes nothing.',
  input: z
    .object({
      workload: Workload.default('database').describe(
        'database (default: OLTP and maintenance), batch, latency or energy-saving.',
      ),
      benchmark: z
        .enum(['latest', 'none'], {
          // `run` was offered once; an old caller learns where measuring went.
          error: (issue) =>
            issue.input === 'run'
              ? "'run' is not offered: asking for advice starts no work. Run the benchmark with " +
                'run_cpu_benchmark (POST /v1/benchmarks), then ask again: benchmark=latest (the default) uses it.'
              : undefined,
        })
        .default('latest')
        .describe(
          'latest (default): use a recent benchmark under the active plan if there is one; none: rules only.',
        ),
    })
    .strict(),
  output: Recommendation,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/recommendation' },
  cli: { command: ['recommend'], format: formatRecommendation },
  handler: async (input, ctx) => advise(ctx, input),
});
