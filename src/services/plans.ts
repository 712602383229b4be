/**
 * The plan operations' work: the plan list, the active plan with its desired state and journal
 * warnings, and set_power_plan (resolve, create a missing well-known plan, holds, policy warnings,
 * dry run) on top of the one plan-change path.
 */
import { PowerPlanError } from '../domain/errors.ts';
import type { Mismatch } from '../domain/idle.ts';
import type { ActivePlan, Plan, PlanList, SetPlanResult } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { journalWarnings } from '../lib/keep-aside.ts';
import type { Store } from '../lib/store.ts';
import type { CreatableKind, PowerBackend } from '../platform/backend.ts';
import { isKind, resolvePlan } from '../platform/resolve.ts';
import type { DesiredService } from './desired.ts';
import type { HoldsService } from './holds.ts';
import type { PlanChangeService } from './plan-change.ts';

export interface PlansContext {
  backend: PowerBackend;
  store: Store;
  desired: DesiredService;
  holds: HoldsService;
  planChange: PlanChangeService;
  caller: Caller;
}

export type SetPlanInput = {
  plan: string;
  dryRun: boolean;
  create: boolean;
  force: boolean;
};

export const listPlans = async (backend: PowerBackend): Promise<PlanList> => {
  const plans = await backend.listPlans();
  return { backend: backend.name, activePlanId: plans.find((p) => p.active)?.id ?? null, plans };
};

/** The plan in force with the desired state, warning when a damaged restore journal was kept aside. */
export const activePlan = async (
  ctx: Pick<PlansContext, 'backend' | 'store' | 'desired' | 'planChange'>,
): Promise<ActivePlan> => {
  const state = await ctx.backend.getActive();
  const effective = state.plan ? await ctx.planChange.lastEffective(state.plan.id) : undefined;
  const answer = await ctx.desired.withDesired(effective ? { ...state, effective } : state);
  const damaged = journalWarnings(ctx.store.damaged());
  return damaged.length ? { ...answer, warnings: [...(answer.warnings ?? []), ...damaged] } : answer;
};

/** One mismatch as a warning the caller sees. */
export const mismatchWarning = (m: Mismatch): string =>
  `The plan changed, but ${m.setting} is ${m.got ?? 'not applied'} (the plan asks for ${m.wanted}): ${m.cause}`;

const creatable = (s: string): CreatableKind | undefined => {
  const k = s.trim().toLowerCase();
  return isKind(k) && (k === 'ultimate-performance' || k === 'high-performance') ? k : undefined;
};

/** Finds the target plan; creates a missing well-known one when asked (never during a dry run). */
const findTarget = async (
  ctx: PlansContext,
  plans: Plan[],
  input: SetPlanInput,
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

/** set_power_plan: idempotent, refused while holds are in force unless forced, serialised with other changes. */
export const setPlan = async (ctx: PlansContext, input: SetPlanInput): Promise<SetPlanResult> => {
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
      return answer(target.id !== before.id, target.id === before.id ? before : { ...target, active: true });
    const { after, changed, effective } = await ctx.planChange.switchTo(
      ctx.caller,
      'set_power_plan',
      target,
      input,
      { before },
    );
    await held.commit();
    // A change that did not fully take effect is still a change, but the caller is told.
    for (const m of effective?.mismatches ?? []) warnings.push(mismatchWarning(m));
    return { ...answer(changed, after), ...(effective ? { effective } : {}) };
  };
  return input.dryRun ? run() : ctx.planChange.run(`set_power_plan (${ctx.caller.name})`, run);
};
