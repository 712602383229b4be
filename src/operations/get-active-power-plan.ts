/** get_active_power_plan: the plan in force, its processor settings, owner and whether it can change. */
import { z } from 'zod';
import { ActivePlan } from '../domain/schemas.ts';
import { journalWarnings } from '../lib/keep-aside.ts';
import { defineOperation } from './define.ts';
import { planLine, processorLines } from './format.ts';

export const getActivePowerPlan = defineOperation({
  name: 'get_active_power_plan',
  title: 'Active power plan',
  description:
    'Returns the plan in force with its effective processor settings (minimum/maximum processor state, boost, ' +
    'energy performance preference on Windows; governor, driver, EPP, turbo, platform profile on Linux; null ' +
    'where not exposed), who owns the setting (powercfg, group policy, tuned, power-profiles-daemon, sysfs, ' +
    'firmware) and whether this service can change it, with the reason when it cannot. Warns when a damaged ' +
    'restore journal was kept aside (a restore may be pending). Read-only and cheap.',
  input: z.object({}).strict(),
  output: ActivePlan,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  scope: 'read',
  http: { method: 'GET', path: '/v1/plans/active' },
  cli: {
    command: ['active'],
    format: (a) =>
      [
        a.plan ? planLine(a.plan).trimStart() : 'No power plan is exposed on this system.',
        ...processorLines(a.processor),
        `  ${'Owner'.padEnd(25)} ${a.owner}${a.policyManaged ? ' (policy-managed)' : ''}`,
        `  ${'Can change'.padEnd(25)} ${a.canSet ? 'yes' : `no: ${a.cannotSetReason ?? 'unknown reason'}`}`,
        ...(a.desired
          ? [
              `  ${'Desired plan'.padEnd(25)} ${a.desired.planId}: ${a.desired.status}${a.desired.enforce ? ' (enforced)' : ''}`,
            ]
          : []),
        ...(a.warnings ?? []).map((w) => `Warning: ${w}`),
      ].join('\n'),
  },
  handler: async (_input, ctx) => {
    const answer = await ctx.desired.withDesired(await ctx.backend.getActive());
    const damaged = journalWarnings(ctx.store.damaged());
    return damaged.length ? { ...answer, warnings: [...(answer.warnings ?? []), ...damaged] } : answer;
  },
});
