/** get_desired_state: the desired plan, whether it is in force, and the drift counters. */
import { z } from 'zod';
import { DesiredState } from '../services/desired-schemas.ts';
import { defineOperation } from './define.ts';

export const getDesiredState = defineOperation({
  name: 'get_desired_state',
  title: 'Desired power plan and drift',
  description:
    'Returns the desired plan (set with set_desired_power_plan, or POWERPLAN_DESIRED_PLAN), whether it is in ' +
    'force now, whether drift is corrected (enforce), how often the running service checks, and its counters: ' +
    'drifts detected and corrected, the last check and the last drift. Drift is not counted or corrected while ' +
    'a hold is in force, and only reported where group policy owns the plan. Read-only.',
  input: z.object({}).strict(),
  output: DesiredState,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  scope: 'read',
  http: { method: 'GET', path: '/v1/desired' },
  cli: {
    command: ['desired'],
    format: (d) =>
      d.status === 'none'
        ? 'No desired plan is set.'
        : [
            `Desired plan   ${d.planName ?? d.planId} (${d.planId}), from ${d.source === 'api' ? 'the API' : 'the configuration'}`,
            `Status         ${d.status}${d.activePlanId && !d.inDesiredState ? `; in force: ${d.activePlanId}` : ''}`,
            `Enforce        ${d.enforce ? `yes, checked every ${d.intervalSeconds} s` : 'no (drift is reported only)'}`,
            ...(d.checkerRunning
              ? [
                  `Last check     ${d.lastCheck ?? 'not yet'}`,
                  `Drifts         ${d.driftTotal} detected, ${d.correctedTotal} corrected`,
                ]
              : []),
            ...(d.lastError ? [`Last error     ${d.lastError}`] : []),
          ].join('\n'),
  },
  handler: async (_input, ctx) => ctx.desired.state(),
});
