/**
 * Holds: keep a plan in force for a while (a maintenance window), then restore the plan that was in
 * force before the first hold. The journal `holds.json` is written before the plan changes, so an
 * expiry or a restore also happens after a restart or a crash (see `recoverHolds`).
 *
 * Overlapping holds must name the same plan: a hold for another plan while holds are in force is
 * refused (409), so a running job never has its plan switched under it. The restore happens when
 * the last hold ends. Every plan change runs under `deps.planLock`; the `...Locked` functions
 * expect the caller to hold it.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.ts';
import { PowerPlanError } from '../domain/errors.ts';
import type { Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { audit } from '../lib/audit.ts';
import type { Store } from '../lib/store.ts';
import { resolvePlan } from '../platform/resolve.ts';
import {
  type Hold,
  HoldJournal,
  type HoldList,
  type HoldRecord,
  type HoldResult,
  type ReleaseResult,
} from './holds-schemas.ts';

type HoldDeps = Pick<Deps, 'store' | 'backend' | 'planLock' | 'log'>;

/** Longest sleep of the expiry timer: holds taken by another process (the CLI) are seen this late. */
const POLL_MS = 5_000;

const readJournal = (store: Store) => store.read('holds.json', HoldJournal);

const isLive = (h: HoldRecord, now: number) => Date.parse(h.expiresAt) > now;

const toHold = (h: HoldRecord, now: number): Hold => ({
  ...h,
  secondsRemaining: Math.max(0, Math.ceil((Date.parse(h.expiresAt) - now) / 1000)),
});

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

const describeHolds = (holds: readonly HoldRecord[]) =>
  holds.map((h) => `${h.id} (${h.planName} until ${h.expiresAt}, by ${h.createdBy})`).join(', ');

/** The holds in force now, without changing anything (for read-only answers and dry runs). */
export const liveHolds = async (store: Store, now = Date.now()): Promise<HoldRecord[]> =>
  ((await readJournal(store))?.holds ?? []).filter((h) => isLive(h, now));

/** Wakes the expiry timer of this process after a change, so a short hold ends on time. */
const kicks = new WeakMap<Store, () => void>();
const kick = (store: Store) => kicks.get(store)?.();

const activePlan = async (deps: HoldDeps): Promise<{ plans: Plan[]; active: Plan }> => {
  const plans = await deps.backend.listPlans();
  const active = plans.find((p) => p.active);
  if (!active) {
    const state = await deps.backend.getActive();
    throw new PowerPlanError('unsupported', state.cannotSetReason ?? 'This system exposes no power plans.');
  }
  return { plans, active };
};

/**
 * Restores the journal's plan after the last hold ended and removes the journal. A failure keeps
 * the journal (the timer and the next start retry) and is audited once per distinct error; a
 * restore plan that no longer exists cannot be retried, so the journal is dropped.
 */
const restoreLocked = async (
  deps: HoldDeps,
  journal: HoldJournal,
  who: Caller | 'service',
  ended: readonly HoldRecord[],
): Promise<{ restoredPlan: Plan | null; error?: string }> => {
  if (journal.holds.length) await deps.store.write('holds.json', { ...journal, holds: [] });
  const input = { holds: ended.map((h) => h.id), restorePlanId: journal.restorePlanId };
  let before: Plan | undefined;
  try {
    before = (await deps.backend.listPlans()).find((p) => p.active);
    if (before?.id !== journal.restorePlanId) await deps.backend.setActive(journal.restorePlanId);
  } catch (e) {
    const error = errorText(e);
    const gone = e instanceof PowerPlanError && e.code === 'not_found';
    if (error !== journal.restoreError) {
      await audit(deps.store, who, { operation: 'hold_restore', input, before, result: 'failed', error });
      deps.log.error('restoring the plan after the last hold failed', { error, willRetry: !gone });
    }
    if (gone) await deps.store.remove('holds.json');
    else await deps.store.write('holds.json', { ...journal, holds: [], restoreError: error });
    return { restoredPlan: null, error };
  }
  const after = (await deps.backend.listPlans()).find((p) => p.id === journal.restorePlanId) ?? null;
  await audit(deps.store, who, { operation: 'hold_restore', input, before, after, result: 'restored' });
  await deps.store.remove('holds.json');
  deps.log.info('holds ended, plan restored', { planId: journal.restorePlanId });
  return { restoredPlan: after };
};

/** Ends expired holds and, when none remain, restores the plan. Caller holds the plan lock. */
export const settleHoldsLocked = async (deps: HoldDeps, now = Date.now()): Promise<void> => {
  const journal = await readJournal(deps.store);
  if (!journal) return;
  const expired = journal.holds.filter((h) => !isLive(h, now));
  const alive = journal.holds.filter((h) => isLive(h, now));
  if (alive.length === 0) {
    await restoreLocked(deps, journal, 'service', expired);
    return;
  }
  if (expired.length === 0) return;
  await deps.store.write('holds.json', { ...journal, holds: alive });
  for (const h of expired) {
    await audit(deps.store, 'service', {
      operation: 'hold_expire',
      input: { id: h.id, planId: h.planId, remaining: alive.length },
      result: 'changed',
    });
  }
};

/** True when the journal asks for work now: an expired hold or a restore still owed. */
const due = (journal: HoldJournal | undefined, now: number) =>
  journal !== undefined && (journal.holds.length === 0 || journal.holds.some((h) => !isLive(h, now)));

/** Settles under the plan lock when something is due; a busy lock is left for the next attempt. */
const settleIfDue = async (deps: HoldDeps): Promise<void> => {
  if (!due(await readJournal(deps.store), Date.now())) return;
  await deps.planLock.run('hold expiry', () => settleHoldsLocked(deps));
};

export const currentHolds = async (deps: HoldDeps): Promise<HoldList> => {
  try {
    await settleIfDue(deps);
  } catch (e) {
    deps.log.debug('settling holds deferred', { error: errorText(e) });
  }
  const journal = await readJournal(deps.store);
  const now = Date.now();
  const alive = (journal?.holds ?? []).filter((h) => isLive(h, now));
  const endsAt = alive.reduce<string | null>(
    (m, h) => (m === null || h.expiresAt > m ? h.expiresAt : m),
    null,
  );
  return {
    holds: alive.map((h) => toHold(h, now)),
    heldPlanId: alive[0]?.planId ?? null,
    restorePlanId: journal?.restorePlanId ?? null,
    restorePlanName: journal?.restorePlanName ?? null,
    endsAt,
    restorePending: journal !== undefined && alive.length === 0,
    ...(journal?.restoreError ? { restoreError: journal.restoreError } : {}),
  };
};

export const createHold = async (
  deps: HoldDeps,
  caller: Caller,
  input: { plan: string; seconds: number; reason?: string | undefined },
): Promise<HoldResult> =>
  deps.planLock.run(`hold_power_plan (${caller.name})`, async () => {
    await settleHoldsLocked(deps);
    const { plans, active: before } = await activePlan(deps);
    const target = resolvePlan(input.plan, plans, deps.backend.aliases?.() ?? {});
    const journal = await readJournal(deps.store);
    const held = journal?.holds ?? [];
    if (held.length && held[0]!.planId !== target.id) {
      throw new PowerPlanError(
        'conflict',
        `${held[0]!.planName} (${held[0]!.planId}) is held until ${held
          .map((h) => h.expiresAt)
          .sort()
          .at(-1)} by ` +
          `${describeHolds(held)}. Hold the same plan, or release those holds first (release_power_plan).`,
        { holds: held.map((h) => toHold(h, Date.now())) },
      );
    }
    const state = await deps.backend.getActive();
    if (target.id !== before.id && !state.canSet) {
      throw new PowerPlanError(
        'forbidden',
        state.cannotSetReason ?? 'The power plan cannot be changed here.',
      );
    }
    const now = Date.now();
    const record: HoldRecord = {
      id: randomUUID(),
      planId: target.id,
      planName: target.name,
      ...(input.reason ? { reason: input.reason } : {}),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + input.seconds * 1000).toISOString(),
      createdBy: caller.name,
    };
    // A restore still owed (its journal has no holds) keeps the plan from before the first hold.
    const next: HoldJournal = journal
      ? { ...journal, holds: [...journal.holds, record] }
      : { version: 1, restorePlanId: before.id, restorePlanName: before.name, holds: [record] };
    await deps.store.write('holds.json', next);
    const auditInput = {
      plan: input.plan,
      durationSeconds: input.seconds,
      reason: input.reason,
      id: record.id,
    };
    if (target.id !== before.id) {
      try {
        await deps.backend.setActive(target.id);
      } catch (e) {
        if (journal) await deps.store.write('holds.json', journal);
        else await deps.store.remove('holds.json');
        await audit(deps.store, caller, {
          operation: 'hold_power_plan',
          input: auditInput,
          before,
          after: target,
          result: 'failed',
          error: errorText(e),
        });
        throw e;
      }
    }
    const after = (await deps.backend.listPlans()).find((p) => p.id === target.id) ?? {
      ...target,
      active: true,
    };
    await audit(deps.store, caller, {
      operation: 'hold_power_plan',
      input: auditInput,
      before,
      after,
      result: 'changed',
    });
    kick(deps.store);
    const warnings = state.policyManaged
      ? ['Group policy sets the power plan here; the next policy refresh may revert the held plan.']
      : [];
    return {
      hold: toHold(record, Date.now()),
      changed: target.id !== before.id,
      before,
      after,
      restorePlanId: next.restorePlanId,
      ...(warnings.length ? { warnings } : {}),
    };
  });

export const releaseHold = async (deps: HoldDeps, caller: Caller, id: string): Promise<ReleaseResult> =>
  deps.planLock.run(`release_power_plan (${caller.name})`, async () => {
    await settleHoldsLocked(deps);
    const journal = await readJournal(deps.store);
    const hold = journal?.holds.find((h) => h.id === id);
    if (!journal || !hold) {
      throw new PowerPlanError(
        'not_found',
        `No hold '${id}' is in force (it may have expired or been released); list_holds shows the holds in force.`,
      );
    }
    const now = Date.now();
    const remaining = journal.holds.filter((h) => h.id !== id);
    await audit(deps.store, caller, {
      operation: 'release_power_plan',
      input: { id, planId: hold.planId, remaining: remaining.length },
      result: 'changed',
    });
    if (remaining.length) {
      await deps.store.write('holds.json', { ...journal, holds: remaining });
      return {
        released: toHold(hold, now),
        remaining: remaining.map((h) => toHold(h, now)),
        restored: false,
        restoredPlan: null,
      };
    }
    const { restoredPlan, error } = await restoreLocked(deps, journal, caller, [hold]);
    return {
      released: toHold(hold, now),
      remaining: [],
      restored: restoredPlan !== null,
      restoredPlan,
      ...(error ? { warnings: [`The plan could not be restored (it will be retried): ${error}`] } : {}),
    };
  });

/**
 * What set_power_plan must do about holds. Without `force` a change while holds are in force is
 * refused (409); asking for the plan already in force is harmless and only warned about. With
 * `force`, `commit()` ends the holds once the set has succeeded (so a failed set keeps them), and
 * the plan set stays: nothing is restored. Call under the plan lock unless `dryRun`.
 */
export const holdsBeforeSet = async (
  deps: HoldDeps,
  caller: Caller,
  args: { targetId: string; activeId: string; force: boolean; dryRun: boolean },
): Promise<{ warnings: string[]; commit: () => Promise<void> }> => {
  const held = await liveHolds(deps.store);
  const none = async () => {};
  if (held.length === 0) return { warnings: [], commit: none };
  if (!args.force) {
    if (args.targetId === args.activeId) {
      return { warnings: [`The plan is held: ${describeHolds(held)}.`], commit: none };
    }
    throw new PowerPlanError(
      'conflict',
      `The plan is held: ${describeHolds(held)}. Release the holds (release_power_plan), or repeat with ` +
        'force: true (CLI: --force) to end them; the plan you set then stays and nothing is restored.',
      { holds: held.map((h) => toHold(h, Date.now())) },
    );
  }
  const ending = `${held.length === 1 ? 'hold' : 'holds'} ${held.map((h) => h.id).join(', ')}`;
  if (args.dryRun) return { warnings: [`Would end ${ending}; nothing would be restored.`], commit: none };
  return {
    warnings: [`Ended ${ending}; nothing will be restored.`],
    commit: async () => {
      for (const h of held) {
        await audit(deps.store, caller, {
          operation: 'release_power_plan',
          input: { id: h.id, planId: h.planId, forcedBy: 'set_power_plan' },
          result: 'changed',
        });
      }
      await deps.store.remove('holds.json');
    },
  };
};

/**
 * Start-up recovery: end what expired while the service was down (restoring the plan), and
 * re-apply the held plan when a crash came between writing the journal and switching the plan.
 */
export const recoverHolds = async (deps: HoldDeps): Promise<void> =>
  deps.planLock.run('hold recovery', async () => {
    await settleHoldsLocked(deps);
    const held = await liveHolds(deps.store);
    if (held.length === 0) return;
    const { active } = await activePlan(deps);
    if (active.id === held[0]!.planId) return;
    await deps.backend.setActive(held[0]!.planId);
    await audit(deps.store, 'service', {
      operation: 'hold_recover',
      input: { holds: held.map((h) => h.id) },
      before: active,
      after: { id: held[0]!.planId, name: held[0]!.planName },
      result: 'restored',
    });
  });

/** Seconds until the next hold ends, and how many are in force: for /metrics and the dashboard. */
export const holdsSnapshot = async (
  store: Store,
): Promise<{ active: number; secondsUntilExpiry: number | null; secondsUntilRestore: number | null }> => {
  const now = Date.now();
  const held = await liveHolds(store, now);
  const left = held.map((h) => (Date.parse(h.expiresAt) - now) / 1000);
  return {
    active: held.length,
    secondsUntilExpiry: left.length ? Math.min(...left) : null,
    secondsUntilRestore: left.length ? Math.max(...left) : null,
  };
};

/**
 * The expiry timer of a running server: sleeps until the next expiry (at most POLL_MS, to notice
 * holds taken by another process), then settles. Unref'd; stopped on shutdown.
 */
export const startHoldTimer = (deps: HoldDeps & Pick<Deps, 'shutdown'>): { stop: () => void } => {
  let timer: NodeJS.Timeout | undefined;
  let generation = 0;
  let stopped = false;

  const schedule = async () => {
    const mine = ++generation;
    clearTimeout(timer);
    let delay = POLL_MS;
    try {
      const journal = await readJournal(deps.store);
      const now = Date.now();
      // A failing restore is retried at the poll pace, not in a tight loop.
      if (due(journal, now) && !journal?.restoreError) delay = 0;
      for (const h of journal?.holds ?? []) delay = Math.min(delay, Date.parse(h.expiresAt) - now);
    } catch (e) {
      deps.log.warn('reading the hold journal failed', { error: errorText(e) });
    }
    if (stopped || mine !== generation) return;
    timer = setTimeout(() => void tick(), Math.max(delay, 20));
    timer.unref();
  };

  const tick = async () => {
    try {
      await settleIfDue(deps);
    } catch (e) {
      deps.log.warn('ending expired holds failed; retrying', { error: errorText(e) });
    }
    if (!stopped) await schedule();
  };

  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    kicks.delete(deps.store);
  };
  kicks.set(deps.store, () => {
    if (!stopped) void schedule();
  });
  deps.shutdown.signal.addEventListener('abort', stop, { once: true });
  void schedule();
  return { stop };
};
