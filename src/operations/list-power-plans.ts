/** list_power_plans: every plan the system offers, with the active one marked. */
import { PlanList } from '../domain/schemas.ts';
import { listPlans } from '../services/plans.ts';
import { defineOperation, readOnly } from './define.ts';
import { planLine } from './format.ts';
import { noInput } from './inputs.ts';

export const listPowerPlans = defineOperation({
  name: 'list_power_plans',
  title: 'List power plans',
  description:
    'Lists the power plans this system offers (Windows power schemes by GUID, tuned or power-profiles-daemon ' +
    'profiles, or cpufreq governors), each with a `kind` (ultimate-performance, high-performance, balanced, ' +
    'power-saver, custom) that does not depend on the localized name, and which one is active. Read-only.',
  input: noInput,
  output: PlanList,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/plans' },
  cli: {
    command: ['plans'],
    format: (l) =>
      l.plans.length
        ? l.plans.map(planLine).join('\n')
        : `No power plans are exposed (backend: ${l.backend}).`,
  },
  handler: async (_input, ctx) => listPlans(ctx.backend),
});
