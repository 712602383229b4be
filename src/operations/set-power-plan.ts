/** set_power_plan: make a plan active, idempotently, with a dry run and an audit line per change. */
import { z } from 'zod';
import { PowerPlanError } from '../domain/errors.ts';
import { type Plan, SetPlanResult } from '../domain/schemas.ts';
import { setPlanRoute } from '../domain/set-plan-route.ts';
import type { CreatableKind } from '../platform/backend.ts';
import { isKind, resolvePlan } from '../platform/resolve.ts';
import type { OperationContext } from './define.ts';
import { defineOperation } from './define.ts';

export const PlanRef = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters')
  .describe(
    'The plan: its id (Windows GUID, tuned/PPD profile or governor name), a kind alias (high-performance, ' +
      'ultimate-performance, balanced, power-saver), a powercfg alias (SCHEME_MIN, SCHEME_MAX, SCHEME_BALANCED) ' +
      'or the exact plan name (case-insensitive).',
  );

const creatable = (s: string): CreatableKind | undefined => {
  const k = s.trim().toLowerCase();
  return isKind(k) && (k === 'ultimate-performance' || k === 'high-performance') ? k : undefined;
};

/** Finds the target plan; creates a missing well-known one when asked (never during a dry run). */
const findTarget = async (
  ctx: OperationContext,
  plans: Plan[],
  input: { plan: string; create: boolean; dryRun: boolean },
): Promise<{ target: Plan; created: boolean }> => {
  try {
    return { target: resolvePlan(input.plan, plans, ctx.backend.aliases?.() ?? {}), created: false };
  } catch (e) {
    const kind = creatable(input.plan);
    if (!(e instanceof PowerPlanError) || e.code !== 'not_found' || !kind) throw e;
    const caps = await ctx.backend.capabilities();
    if (!caps.createPlan || !ctx.backend.createPlan) throw e;
    if (!input.create) {
      throw new PowerPlanError(
        'not_found',
        `${e.message} The ${kind} plan is not installed here; repeat with create: true (CLI: --create) to create it from the Windows template.`,
        e.details,
      );
    }
    if (input.dryRun) {
      return {
        target: { id: '(new)', name: kind, kind, active: true, builtin: false },
        created: true,
      };
    }
    const created = await ctx.backend.createPlan(kind);
    await ctx.planChange.audit(ctx.caller, {
      operation: 'set_power_plan',
      input,
      before: null,
      after: { id: created.id, name: created.name },
      result: 'created',
    });
    return { target: created, created: true };
  }
};

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
    'is refused with a conflict unless force: true, which ends them.',
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
          'Change the plan although holds are in force (hold_power_plan): ends them, and the plan set stays (nothing is restored).',
        ),
    })
    .strict(),
  output: SetPlanResult,
  annotations: { readOnly: false, destructive: true, idempotent: true },
  scope: 'control',
  http: setPlanRoute.http,
  cli: {
    ...setPlanRoute.cli,
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
      return [line, ...(r.warnings ?? []).map((w) => `Warning: ${w}`)].join('\n');
    },
  },
  handler: async (input, ctx) => {
    const run = async () => {
      const { plans, active: before } = await ctx.planChange.active();
      const { target, created } = await findTarget(ctx, plans, input);
      const held = await ctx.holds.beforeSet(ctx.caller, {
        targetId: target.id,
        activeId: before.id,
        force: input.force,
        dryRun: input.dryRun,
      });
      const warnings: string[] = [...held.warnings];
      const state = await ctx.backend.getActive();
      if (state.policyManaged) {
        warnings.push(
          'Group policy sets the power plan here; the next policy refresh will revert this change.',
        );
      }
      if (input.dryRun && target.id !== before.id && !state.canSet) {
        warnings.push(`The change would be refused: ${state.cannotSetReason ?? 'not allowed here'}`);
      }
      const answer = (changed: boolean, after: Plan) => ({
        changed,
        dryRun: input.dryRun,
        before,
        after,
        ...(created && changed ? { created } : {}),
        ...(warnings.length ? { warnings } : {}),
      });
      if (input.dryRun)
        return answer(
          target.id !== before.id,
          target.id === before.id ? before : { ...target, active: true },
        );
      const { after, changed } = await ctx.planChange.switchTo(ctx.caller, 'set_power_plan', target, input, {
        before,
      });
      await held.commit();
      return answer(changed, after);
    };
    return input.dryRun ? run() : ctx.planChange.run(`set_power_plan (${ctx.caller.name})`, run);
  },
});
