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
    'that ran under the active plan, otherwise the rules alone, and says which in `basis`. benchmark=run measures ' +
    'now (a few seconds of CPU load; needs the benchmark scope). Changes nothing.',
  input: z
    .object({
      workload: Workload.default('database').describe(
        'database (default: OLTP and maintenance), batch, latency or energy-saving.',
      ),
      benchmark: z
        .enum(['latest', 'run', 'none'])
        .default('latest')
        .describe(
          'latest (default): use a recent benchmark under the active plan if there is one; run: run the quick benchmark now (benchmark scope); none: rules only.',
        ),
      force: z
        .boolean()
        .default(false)
        .describe('With benchmark=run: run even when the CPU is already busy.'),
    })
    .strict(),
  output: Recommendation,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/recommendation' },
  cli: { command: ['recommend'], format: formatRecommendation },
  handler: async (input, ctx) => advise(ctx, input),
});
