/** set_desired_power_plan: the plan the service keeps an eye on (and, with enforce, sets back). */
import { z } from 'zod';
import { DesiredState } from '../domain/desired.ts';
import { defineOperation } from './define.ts';
import { formatDesired } from './format.ts';
import { PlanRef } from './inputs.ts';

export const setDesiredPowerPlan = defineOperation({
  name: 'set_desired_power_plan',
  title: 'Set the desired power plan',
  description:
    'Sets the plan this service should find in force; the running service checks every POWERPLAN_DESIRED_INTERVAL ' +
    'seconds, audits and counts each drift, and with enforce: true sets the plan back (at most once per interval, ' +
    'never against a hold or group policy). plan: null (CLI: none) removes the desired plan. This setting is kept ' +
    'in the state directory and wins over POWERPLAN_DESIRED_PLAN. It does not switch the plan by itself unless ' +
    'enforce is on. Audited.',
  input: z
    .object({
      plan: z
        .union([PlanRef, z.null()])
        .describe(`${PlanRef.description} null, or the word none, removes the desired plan.`),
      enforce: z
        .boolean()
        .optional()
        .describe('Set the plan back on drift; when omitted, POWERPLAN_ENFORCE decides (default false).'),
    })
    .strict(),
  output: DesiredState,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  scope: 'control',
  http: { method: 'PUT', path: '/v1/desired' },
  cli: {
    command: ['desired', 'set'],
    positional: ['plan'],
    format: formatDesired,
  },
  handler: async (input, ctx) => ctx.desired.set(ctx.caller, input),
});
