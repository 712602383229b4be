/** get_desired_state: the desired plan, whether it is in force, and the drift counters. */
import { DesiredState } from '../domain/desired.ts';
import { defineOperation, readOnly } from './define.ts';
import { formatDesired } from './format.ts';
import { noInput } from './inputs.ts';

export const getDesiredState = defineOperation({
  name: 'get_desired_state',
  title: 'Desired power plan and drift',
  description:
    'Returns the desired plan (set with set_desired_power_plan, or POWERPLAN_DESIRED_PLAN), whether it is in ' +
    'force now, whether drift is corrected (enforce), how often the running service checks, and its counters: ' +
    'drifts detected and corrected, the last check and the last drift. Drift is not counted or corrected while ' +
    'a hold is in force, and only reported where group policy owns the plan. Read-only.',
  input: noInput,
  output: DesiredState,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/desired' },
  cli: {
    command: ['desired'],
    format: formatDesired,
  },
  handler: async (_input, ctx) => ctx.desired.state(),
});
