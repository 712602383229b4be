/**
 * Desired state: an optional plan the service keeps an eye on. A checker in the running server
 * compares it with the plan in force every POWERPLAN_DESIRED_INTERVAL seconds; a drift is audited
 * ('detected') and counted once, and with enforcement the plan is set back, at most once per
 * interval. It never fights a hold (the hold's plan is meant to differ) nor group policy (which
 * would revert the change at its next refresh): those are reported only.
 *
 * The counters live in memory per state directory (`desiredRuntime`), for /metrics and
 * get_desired_state; they are those of the process that runs the checker.
 */
import type { Deps } from '../deps.ts';
import { PowerPlanError } from '../domain/errors.ts';
import type { ActivePlan, DesiredSummary, Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { audit } from '../lib/audit.ts';
import type { Store } from '../lib/store.ts';
import { resolvePlan } from '../platform/resolve.ts';
import { DesiredFile, type DesiredState } from './desired-schemas.ts';
import { liveHolds } from './holds.ts';

type DesiredDeps = Pick<Deps, 'store' | 'backend' | 'planLock' | 'log' | 'config'>;

export interface DesiredRuntime {
  checkerRunning: boolean;
  /** Periodic checks completed. */
  checks: number;
  lastCheck: string | null;
  lastDriftAt: string | null;
  /** Drifts detected: counted when a check finds drift after one that did not. */
  driftTotal: number;
  correctedTotal: number;
  /** Result of the last periodic check; null before the first or without a desired plan. */
  inDesiredState: boolean | null;
  /** The desired plan of the last check. */
  planId: string | null;
  lastError: string | undefined;
  /** The current drift was already counted and audited. */
  inDrift: boolean;
  lastEnforceAt: number | undefined;
  /** Runs a check now (set while the checker runs). */
  kick: (() => void) | undefined;
}

const runtimes = new WeakMap<Store, DesiredRuntime>();

/** The live counters of the checker for this state directory (read by /metrics). */
export const desiredRuntime = (store: Store): DesiredRuntime => {
  let rt = runtimes.get(store);
  if (!rt) {
    rt = {
      checkerRunning: false,
      checks: 0,
      lastCheck: null,
      lastDriftAt: null,
      driftTotal: 0,
      correctedTotal: 0,
      inDesiredState: null,
      planId: null,
      lastError: undefined,
      inDrift: false,
      lastEnforceAt: undefined,
      kick: undefined,
    };
    runtimes.set(store, rt);
  }
  return rt;
};

interface Desired {
  source: 'api' | 'config';
  /** A plan id when set through the API; as configured (id, alias or name) from the configuration. */
  planRef: string;
  enforce: boolean;
}

/** The desired plan: `desired.json` when present (even when it says none), else the configuration. */
const loadDesired = async (deps: DesiredDeps): Promise<Desired | undefined> => {
  const file = await deps.store.read('desired.json', DesiredFile);
  if (file) {
    if (file.planId === null) return undefined;
    return { source: 'api', planRef: file.planId, enforce: file.enforce ?? deps.config.desiredEnforce };
  }
  if (!deps.config.desiredPlan) return undefined;
  return { source: 'config', planRef: deps.config.desiredPlan, enforce: deps.config.desiredEnforce };
};

interface Evaluation {
  desired: Desired;
  plan: Plan | undefined;
  summary: DesiredSummary;
}

/** Compares the desired plan with the plan in force; `active` is what the backend just answered. */
const evaluate = async (deps: DesiredDeps, desired: Desired, active: ActivePlan): Promise<Evaluation> => {
  let plan: Plan | undefined;
  if (active.plan?.id === desired.planRef) plan = active.plan;
  else {
    try {
      plan = resolvePlan(desired.planRef, await deps.backend.listPlans(), deps.backend.aliases?.() ?? {});
    } catch (e) {
      if (!(e instanceof PowerPlanError) || (e.code !== 'not_found' && e.code !== 'conflict')) throw e;
    }
  }
  const inDesiredState = plan !== undefined && active.plan?.id === plan.id;
  const status: DesiredSummary['status'] = !plan
    ? 'unknown-plan'
    : inDesiredState
      ? 'in-desired-state'
      : (await liveHolds(deps.store)).length
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
      lastCheck: desiredRuntime(deps.store).lastCheck,
      enforce: desired.enforce,
    },
  };
};

/** get_active_power_plan's answer with the `desired` comparison added when a desired plan is set. */
export const withDesired = async (deps: DesiredDeps, active: ActivePlan): Promise<ActivePlan> => {
  const desired = await loadDesired(deps);
  if (!desired) return active;
  return { ...active, desired: (await evaluate(deps, desired, active)).summary };
};

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Sets the desired plan back, unless a hold was taken meanwhile or the last try is too recent. */
const enforce = async (deps: DesiredDeps, rt: DesiredRuntime, target: Plan, active: ActivePlan) => {
  if (!active.canSet) {
    rt.lastError = active.cannotSetReason ?? 'The power plan cannot be changed here.';
    return;
  }
  const now = Date.now();
  // 90%: the timer's own jitter must not push a correction to the interval after next.
  if (rt.lastEnforceAt !== undefined && now - rt.lastEnforceAt < deps.config.desiredInterval * 900) return;
  rt.lastEnforceAt = now;
  await deps.planLock.run('desired state enforcement', async () => {
    if ((await liveHolds(deps.store)).length) return;
    const before = (await deps.backend.listPlans()).find((p) => p.active);
    if (before?.id === target.id) return;
    try {
      await deps.backend.setActive(target.id);
    } catch (e) {
      const error = errorText(e);
      if (error !== rt.lastError) {
        await audit(deps.store, 'service', {
          operation: 'enforce_desired_state',
          input: { desired: target.id },
          before,
          after: target,
          result: 'failed',
          error,
        });
        deps.log.error('setting the desired plan back failed', { error });
      }
      rt.lastError = error;
      return;
    }
    await audit(deps.store, 'service', {
      operation: 'enforce_desired_state',
      input: { desired: target.id },
      before,
      after: { ...target, active: true },
      result: 'changed',
    });
    deps.log.info('desired plan set back', { from: before?.id, to: target.id });
    rt.correctedTotal++;
    rt.inDrift = false;
    rt.inDesiredState = true;
    rt.lastError = undefined;
  });
};

/** One periodic check: detect (audit + count once per drift), then correct when enforcing. */
export const checkDesiredState = async (deps: DesiredDeps): Promise<void> => {
  const rt = desiredRuntime(deps.store);
  const desired = await loadDesired(deps);
  if (!desired) {
    Object.assign(rt, {
      lastCheck: new Date().toISOString(),
      inDesiredState: null,
      planId: null,
      inDrift: false,
    });
    return;
  }
  const active = await deps.backend.getActive();
  const { plan, summary } = await evaluate(deps, desired, active);
  rt.lastCheck = new Date().toISOString();
  rt.inDesiredState = summary.inDesiredState;
  rt.planId = summary.planId;
  if (summary.status === 'unknown-plan') {
    rt.lastError = `The desired plan '${desired.planRef}' matches no plan here.`;
    return;
  }
  // In the desired state, or held on purpose: a drift seen after this is a new one.
  if (summary.status === 'in-desired-state' || summary.status === 'held') {
    rt.inDrift = false;
    return;
  }
  if (!rt.inDrift) {
    rt.inDrift = true;
    rt.driftTotal++;
    rt.lastDriftAt = rt.lastCheck;
    await audit(deps.store, 'service', {
      operation: 'desired_state_check',
      input: { desired: summary.planId, enforce: desired.enforce, policyManaged: active.policyManaged },
      before: active.plan,
      after: plan,
      result: 'detected',
    });
    deps.log.warn('power plan drift', {
      desired: summary.planId,
      active: active.plan?.id,
      status: summary.status,
    });
  }
  if (summary.status === 'drift' && desired.enforce && plan) await enforce(deps, rt, plan, active);
};

/** get_desired_state: the live comparison plus this process's counters. */
export const getDesiredState = async (deps: DesiredDeps): Promise<DesiredState> => {
  const rt = desiredRuntime(deps.store);
  const desired = await loadDesired(deps);
  const active = await deps.backend.getActive();
  const ev = desired ? await evaluate(deps, desired, active) : undefined;
  return {
    planId: ev?.summary.planId ?? null,
    planName: ev?.plan?.name ?? null,
    source: desired?.source ?? 'none',
    enforce: desired?.enforce ?? deps.config.desiredEnforce,
    intervalSeconds: deps.config.desiredInterval,
    activePlanId: active.plan?.id ?? null,
    inDesiredState: ev?.summary.inDesiredState ?? null,
    status: ev?.summary.status ?? 'none',
    checkerRunning: rt.checkerRunning,
    lastCheck: rt.lastCheck,
    lastDriftAt: rt.lastDriftAt,
    driftTotal: rt.driftTotal,
    correctedTotal: rt.correctedTotal,
    ...(rt.lastError ? { lastError: rt.lastError } : {}),
  };
};

/** set_desired_power_plan: `null` (or `none`) means no desired plan, even when one is configured. */
export const setDesired = async (
  deps: DesiredDeps,
  caller: Caller,
  input: { plan: string | null; enforce?: boolean | undefined },
): Promise<DesiredState> => {
  const clear = input.plan === null || input.plan.trim().toLowerCase() === 'none';
  const target =
    clear || input.plan === null
      ? null
      : resolvePlan(input.plan, await deps.backend.listPlans(), deps.backend.aliases?.() ?? {});
  const file: DesiredFile = {
    planId: target?.id ?? null,
    planName: target?.name ?? null,
    ...(input.enforce !== undefined ? { enforce: input.enforce } : {}),
    setAt: new Date().toISOString(),
    setBy: caller.name,
  };
  await deps.store.write('desired.json', file);
  await audit(deps.store, caller, {
    operation: 'set_desired_power_plan',
    input,
    after: file,
    result: 'changed',
  });
  const rt = desiredRuntime(deps.store);
  rt.inDrift = false;
  rt.lastEnforceAt = undefined;
  rt.lastError = undefined;
  rt.kick?.();
  return getDesiredState(deps);
};

/** The periodic checker of a running server: first check at once, then every interval. Unref'd. */
export const startDesiredChecker = (deps: DesiredDeps & Pick<Deps, 'shutdown'>): { stop: () => void } => {
  const rt = desiredRuntime(deps.store);
  let running = false;
  let again = false;
  let stopped = false;
  const run = async () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await checkDesiredState(deps);
      rt.checks++;
    } catch (e) {
      rt.lastError = errorText(e);
      deps.log.warn('desired state check failed', { error: rt.lastError });
    } finally {
      running = false;
      if (again) {
        again = false;
        void run();
      }
    }
  };
  const interval = setInterval(() => void run(), deps.config.desiredInterval * 1000);
  interval.unref();
  const stop = () => {
    stopped = true;
    clearInterval(interval);
    rt.checkerRunning = false;
    rt.kick = undefined;
  };
  rt.checkerRunning = true;
  rt.kick = () => void run();
  deps.shutdown.signal.addEventListener('abort', stop, { once: true });
  void run();
  return { stop };
};
