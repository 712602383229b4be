/** set_power_plan: make a plan active, idempotently, with a dry run and an audit line per change. */
import { z } from 'zod';
import { SetPlanResult } from '../domain/schemas.ts';
import { setPlanRoute } from '../domain/set-plan-route.ts';
import { setPlan } from '../services/plans.ts';
import { defineOperation } from './define.ts';
import { PlanRef } from './inputs.ts';

export const setPowerPlan = defineOperation({
  name: 'set_power_plan',
  title: 'Set the active power plan',
  description:
    'Makes a plan active. Accepts a plan id, a kind alias such as high-performance, a powercfg alias or an exact ' +
    'name, and always answers with the resolved id. Try it with dryRun: true first: that says what would change ' +
    'and changes nothing. Idempotent: asking for the plan already active answers changed: false and touches ' +
    'nothing. Changes are audited and serialized with other plan changes. With create: true, a missing ' +
    'Ultimate Performance or High performance plan is created first (Windows). Where group policy owns the plan, ' +
    'the change is made but a warning says it will be reverted. While holds are in force (hold_power_plan) a change ' +
    'is refused with a conflict unless force: true, which ends them; so is a change away from a desired plan that is ' +
    'enforced (set_desired_power_plan), where force: true turns enforcement off (the desired plan stays, its drift ' +
    'reported). After the switch the settings that matter are ' +
    'read back (Windows: the processor and idle settings and any group policy pinning one of them; Linux: governor, ' +
    'EPP, platform profile, `tuned-adm verify`): `effective.mismatches` lists what did not take effect, with the ' +
    'probable cause, and each mismatch adds a warning.',
  input: z
    .object({
      plan: PlanRef,
      dryRun: z.boolean().default(false).describe('Report what would change without changing anything.'),
      create: z
        .boolean()
        .default(false)
        .describe(
          'Create the plan first when it is a well-known plan that is not installed (ultimate-performance, high-performance).',
        ),
      force: z
        .boolean()
        .default(false)
        .describe(
          'Change the plan although holds are in force (hold_power_plan: ends them, and the plan set stays, nothing is ' +
            'restored) or a desired plan is enforced (turns enforcement off; the desired plan stays, its drift reported).',
        ),
    })
    .strict(),
  output: SetPlanResult,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  scope: 'control',
  http: setPlanRoute.http,
  cli: {
    ...setPlanRoute.cli,
    description:
      'Makes a plan active. <plan> is a plan id, a kind alias such as high-performance, a powercfg alias or an exact ' +
      'name; the answer names the plan and its id. Try it with --dry-run first: that says what would change and ' +
      'changes nothing. Asking for the plan already active says so and touches nothing. Changes are audited and ' +
      'serialized with other plan changes. With --create, a missing Ultimate Performance or High performance plan ' +
      'is created first (Windows). Where group policy owns the plan, the change is made but a warning says it will ' +
      'be reverted. While holds are in force (powerplan hold) a change is refused unless --force, which ends them; ' +
      'so is a change away from an enforced desired plan (powerplan desired set), where --force turns enforcement ' +
      'off (the desired plan stays and its drift is reported).',
    format: (r) => {
      const verb = r.dryRun
        ? r.changed
          ? 'Would switch'
          : 'Would keep'
        : r.changed
          ? 'Switched'
          : 'Already active:';
      const line = r.changed
        ? `${verb} from ${r.before.name} (${r.before.id}) to ${r.after.name} (${r.after.id})${r.created ? ', created first' : ''}.`
        : `${verb} ${r.after.name} (${r.after.id}); nothing changed.`;
      const readBack = r.effective?.checked
        ? r.effective.matches
          ? [`Read back ${r.effective.settings.length} setting(s): all in force.`]
          : [
              `Read back ${r.effective.settings.length} setting(s): ${r.effective.mismatches.length} not in force.`,
            ]
        : [];
      return [line, ...readBack, ...(r.warnings ?? []).map((w) => `Warning: ${w}`)].join('\n');
    },
  },
  handler: async (input, ctx) => setPlan(ctx, input),
});
