/**
 * The rules of the desired state, apart from the checker that applies them (desired.ts): where the
 * desired plan comes from (`desired.json`, else the configuration), how the plan in force compares
 * with it (in the desired state, drift, held, policy-managed, unknown plan), and set_power_plan's
 * precondition while a desired plan is enforced.
 */
import type { Config } from '../config.ts';
import { DesiredFile } from '../domain/desired.ts';
import { PowerPlanError } from '../domain/errors.ts';
import type { ActivePlan, DesiredSummary, Plan } from '../domain/schemas.ts';
import type { Store } from '../lib/store.ts';
import type { Precondition } from './change-intent.ts';

export interface Desired {
  source: 'api' | 'config';
  /** A plan id when set through the API; as configured (id, alias or name) from the configuration. */
  planRef: string;
  enforce: boolean;
}

export interface Evaluation {
  desired: Desired;
  plan: Plan | undefined;
  summary: DesiredSummary;
}

/** The desired plan: `desired.json` when present (even when it says none), else the configuration. */
export const loadDesired = async (
  store: Store,
  config: Pick<Config, 'desiredPlan' | 'desiredEnforce'>,
): Promise<Desired | undefined> => {
  const file = await store.readShared('desired.json', DesiredFile);
  if (file) {
    if (file.planId === null) return undefined;
    return { source: 'api', planRef: file.planId, enforce: file.enforce ?? config.desiredEnforce };
  }
  if (!config.desiredPlan) return undefined;
  return { source: 'config', planRef: config.desiredPlan, enforce: config.desiredEnforce };
};

/** What a comparison with the desired plan needs to ask. */
export interface EvaluateWith {
  /** The plan a reference names here (throws not_found or conflict when it names none or several). */
  resolve(ref: string): Promise<Plan>;
  /** True while holds are in force. */
  held(): Promise<boolean>;
  lastCheck: string | null;
}

/** Compares the desired plan with the plan in force; `active` is what the backend just answered. */
export const evaluate = async (
  desired: Desired,
  active: ActivePlan,
  w: EvaluateWith,
): Promise<Evaluation> => {
  let plan: Plan | undefined;
  if (active.plan?.id === desired.planRef) plan = active.plan;
  else {
    try {
      plan = await w.resolve(desired.planRef);
    } catch (e) {
      if (!(e instanceof PowerPlanError) || (e.code !== 'not_found' && e.code !== 'conflict')) throw e;
    }
  }
  const inDesiredState = plan !== undefined && active.plan?.id === plan.id;
  const status: DesiredSummary['status'] = !plan
    ? 'unknown-plan'
    : inDesiredState
      ? 'in-desired-state'
      : (await w.held())
        ? 'held'
        : active.policyManaged
          ? 'policy-managed'
          : 'drift';
  return {
    desired,
    plan,
    summary: {
      planId: plan?.id ?? desired.planRef,
      inDesiredState,
      status,
      lastCheck: w.lastCheck,
      enforce: desired.enforce,
    },
  };
};

export interface EnforcedDesired {
  planId: string;
  planName: string;
  source: 'api' | 'config';
  intervalSeconds: number;
}

/**
 * set_power_plan's rule about an enforced desired plan (a precondition of its change). A change to
 * another plan while a desired plan is enforced would be set back at the next check, so without
 * `force` it is refused (409) naming the desired plan. With `force` the change turns enforcement
 * off once the switch has succeeded (the desired plan stays, its drift is reported); a failed
 * switch leaves it on. Asking for the desired plan itself, or for the plan in force, is never refused.
 */
export const whileEnforced =
  (desired: EnforcedDesired | undefined): Precondition =>
  (c) => {
    if (!desired || !c.switches || desired.planId === c.target.id) return;
    const named = `${desired.planName} (${desired.planId})`;
    if (!c.intent.force) {
      throw new PowerPlanError(
        'conflict',
        `The desired plan is ${named} and it is enforced: the service would set it back within ` +
          `${desired.intervalSeconds} s. Change the desired plan (set_desired_power_plan), or repeat with ` +
          'force: true (CLI: --force), which sets the plan and turns enforcement off: the desired plan stays and its ' +
          'drift is reported, not corrected, until enforcement is turned on again (set_desired_power_plan with enforce: true).',
        {
          desired: {
            planId: desired.planId,
            planName: desired.planName,
            enforce: true,
            source: desired.source,
          },
        },
      );
    }
    if (c.intent.dryRun) {
      c.warnings.push(`Would turn off the enforcement of the desired plan ${named}; it stays desired.`);
      return;
    }
    c.warnings.push(
      `Enforcement of the desired plan ${named} is now off: its drift is reported, not corrected; turn it on again with set_desired_power_plan (enforce: true).`,
    );
    const plan = { id: desired.planId, name: desired.planName };
    c.endEnforcement = { planId: plan.id, planName: plan.name };
    c.followUps.push({
      operation: 'set_desired_power_plan',
      input: { plan: plan.id, enforce: false, forcedBy: 'set_power_plan' },
      before: plan,
      after: plan,
      result: 'changed',
    });
  };
