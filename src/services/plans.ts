/**
 * The plan operations' work: the plan list, the active plan with its desired state and journal
 * warnings, and set_power_plan: its policy (holds, create, dry run) stated as one change intent of
 * the plan-change service.
 */
import type { Effective, Mismatch } from '../domain/idle.ts';
import type { ActivePlan, PlanList, SetPlanResult } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { freezeDeep, isFrozenDeep } from '../lib/frozen.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from '../platform/backend.ts';
import type { DesiredService } from './desired.ts';
import { whileEnforced } from './desired-rules.ts';
import { setWhileHeld } from './hold-rules.ts';
import type { PlanChangeService } from './plan-change.ts';
import { damagedState, journalWarnings } from './state-health.ts';

export interface PlansContext {
  backend: PowerBackend;
  store: Store;
  desired: DesiredService;
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

/** The plan with the last read-back, made once per pair when both are frozen (lib/frozen.ts). */
const withEffectiveOf = new WeakMap<ActivePlan, { effective: Effective; answer: ActivePlan }>();
const withEffective = (state: ActivePlan, effective: Effective): ActivePlan => {
  if (!isFrozenDeep(state) || !isFrozenDeep(effective)) return { ...state, effective };
  const hit = withEffectiveOf.get(state);
  if (hit?.effective === effective) return hit.answer;
  const answer = freezeDeep({ ...state, effective });
  withEffectiveOf.set(state, { effective, answer });
  return answer;
};

/** The plan in force with the desired state, warning when a damaged restore journal was kept aside. */
export const activePlan = async (
  ctx: Pick<PlansContext, 'backend' | 'store' | 'desired' | 'planChange'>,
): Promise<ActivePlan> => {
  const state = await ctx.backend.getActive();
  const effective = state.plan ? await ctx.planChange.lastEffective(state.plan.id) : undefined;
  const answer = await ctx.desired.withDesired(effective ? withEffective(state, effective) : state);
  const damaged = journalWarnings(damagedState(ctx.store));
  return damaged.length ? { ...answer, warnings: [...(answer.warnings ?? []), ...damaged] } : answer;
};

/** One mismatch as a warning the caller sees. */
export const mismatchWarning = (m: Mismatch): string =>
  `The plan changed, but ${m.setting} is ${m.got ?? 'not applied'} (the plan asks for ${m.wanted}): ${m.cause}`;

/**
 * set_power_plan: idempotent, refused while holds are in force (`setWhileHeld`) or against an
 * enforced desired plan (`whileEnforced`) unless forced,
 * serialised with other changes; a missing well-known plan is created when asked. A plan that
 * cannot be changed here is left to the backend to refuse (audited as a failed attempt).
 */
export const setPlan = async (ctx: PlansContext, input: SetPlanInput): Promise<SetPlanResult> => {
  const r = await ctx.planChange.change({
    who: ctx.caller,
    operation: 'set_power_plan',
    plan: input.plan,
    input,
    dryRun: input.dryRun,
    force: input.force,
    create: input.create,
    canSet: 'attempt',
    policy: [setWhileHeld, whileEnforced(await ctx.desired.enforced())],
  });
  return {
    changed: r.changed,
    dryRun: input.dryRun,
    before: r.before!,
    after: r.after,
    ...(r.created && r.changed ? { created: r.created } : {}),
    // A change that did not fully take effect is still a change, but the caller is told.
    ...(r.warnings.length || r.effective?.mismatches.length
      ? { warnings: [...r.warnings, ...(r.effective?.mismatches ?? []).map(mismatchWarning)] }
      : {}),
    ...(r.effective ? { effective: r.effective } : {}),
  };
};
