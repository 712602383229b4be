/**
 * The plan-change service: the one path by which the active plan changes. Every change, whoever
 * wants it (set_power_plan, a hold, a comparison step, desired-state enforcement, a restore, the
 * start-up recovery), is one `ChangeIntent` run through the same steps, in this order:
 *
 *   settle    (under the plan lock) finish what a dead process left: a change in flight
 *             (pending-change.ts), a comparison's restore, expired holds
 *   resolve   the plan reference against the plans here (a missing well-known plan is created
 *             when the intent allows it)
 *   check     the preconditions, in order: `PRECONDITIONS` (a restore owed, the caller's policy,
 *             canSet, the group-policy warning, the dry-run verdict); a refusal throws
 *   journal   the restore the intent owes (restore-journal.ts), then the change in flight
 *   switch    `backend.setActive`, the only call of it outside platform/
 *   verify    `VERIFICATIONS` after the switch: the read-back first; a failure rolls back
 *   audit     one record per change, then the records that follow it; the change in flight ends
 *
 * On failure the journal is put back as it was and the failure is audited (once per distinct
 * error for a change that is retried). The callers only state their policy: what to restore,
 * when, and what refuses a change (`Precondition`s they pass in the intent).
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { AuditOperation } from '../domain/audit.ts';
import type { DesiredFile } from '../domain/desired.ts';
import { errorMessage, PowerPlanError } from '../domain/errors.ts';
import { byLiveness } from '../domain/holds.ts';
import { Effective, notChecked } from '../domain/idle.ts';
import type { ActivePlan, Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { FileLock } from '../lib/file-lock.ts';
import { Lock } from '../lib/lock.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';
import type { CreatableKind, PowerBackend } from '../platform/backend.ts';
import { isKind, resolvePlan } from '../platform/resolve.ts';
import { type AuditEntry, alreadyAudited, PENDING, PendingChange } from './pending-change.ts';
import { JOURNAL, migrateLegacyJournals, RestoreJournal } from './restore-journal.ts';

export type { AuditEntry } from './pending-change.ts';

/** Who acts: a caller, or the service on its own (restore, expiry, enforcement, recovery). */
export type Who = Caller | 'service';

/** A plan named by id (and name, for the audit trail and messages). */
export type PlanTarget = Plan | { id: string; name: string };

/** The read-back of the last switch, kept so the active plan, the page and the fleet can show it. */
const LastEffective = z.object({ planId: z.string(), checkedAt: z.string(), effective: Effective });
const EFFECTIVE = 'effective.json';

/** A plan as the audit trail names it. */
export const auditPlan = (p: { id: string; name?: string } | null | undefined): AuditEntry['before'] =>
  p ? { id: p.id, name: p.name ?? p.id } : null;

/** What a change is asked to do, as the service that wants it states it. */
export interface ChangeIntent {
  who: Who;
  operation: AuditOperation;
  /** The plan to switch to: a reference as the caller typed it (id, alias, name), or a plan. */
  plan: string | PlanTarget;
  /** What the audit record names as the input. */
  input: Record<string, unknown>;
  dryRun?: boolean | undefined;
  force?: boolean | undefined;
  /** A missing well-known plan (high or ultimate performance) may be created (set_power_plan). */
  create?: boolean | undefined;
  /**
   * What a restore still owed means for this change: `any` proceeds (default), `holds` proceeds
   * only with holds in force (a hold joins them), `none` refuses while anything is owed.
   */
  tolerates?: 'any' | 'holds' | 'none';
  /** Refuse up front when the plan cannot be changed here (default), or let the backend answer. */
  canSet?: 'refuse' | 'attempt';
  /** The caller's own rules, checked after the restore owed and before canSet. */
  policy?: readonly Precondition[];
  /** The restore this change owes, written to the journal before the switch. */
  restore?: ((c: Change) => RestoreJournal) | undefined;
  /** Audit the change even when no switch was needed (a hold of the plan in force, a restore done). */
  recordUnchanged?: boolean;
  /** The last failure of a change that is retried: the same failure again is not audited again. */
  lastError?: string | undefined;
  /**
   * The preconditions were checked for the run this change belongs to (a comparison's later
   * steps, a restore, recovery): go straight to the switch.
   */
  checked?: boolean;
}

/** A change being checked: what preconditions see and shape. */
export interface Change {
  readonly intent: ChangeIntent;
  readonly plans: readonly Plan[];
  /** The plan in force before; undefined only when the system reports none in force. */
  readonly before: Plan | undefined;
  readonly target: PlanTarget;
  /** The restore journal in force (after settling). */
  readonly owed: RestoreJournal | undefined;
  /** True when the target is not the plan in force. */
  readonly switches: boolean;
  /** The system's answer about the plan in force (canSet, policy), read once when first asked. */
  state(): Promise<ActivePlan>;
  /** Warnings for the caller's answer. */
  readonly warnings: string[];
  /** The restore journal is removed once the switch succeeded (a forced set ends the holds). */
  clearJournal: boolean;
  /** Records written after the change's own (the holds a forced set ends). */
  readonly followUps: AuditEntry[];
  /** The desired plan whose enforcement is turned off once the switch succeeded (a forced set). */
  endEnforcement: { planId: string; planName: string } | undefined;
  /** True when a well-known plan was created for this change. */
  created: boolean;
}

/** A rule that may refuse a change (throw a PowerPlanError) or add warnings and follow-ups. */
export type Precondition = (c: Change) => void | Promise<void>;

/** The change after the switch, as the verifications see it. */
export interface Switched {
  readonly change: Change;
  /** The plan list read back after the switch. */
  plans: Plan[];
  /** The plan in force after the switch, by the read-back. */
  after: Plan | undefined;
  /** Requested versus effective: the settings the plan should have put in force, read back. */
  effective?: Effective;
}

/** What a verification may use. */
export interface VerifyContext {
  backend: PowerBackend;
  /** Reads back the settings a plan should have put in force and keeps the answer (never throws). */
  readBack(planId: string): Promise<Effective>;
}

/** A check after the switch; throwing fails the change (the journal is rolled back, the failure audited). */
export type Verification = (s: Switched, ctx: VerifyContext) => Promise<void>;

export interface ChangeOutcome {
  before: Plan | undefined;
  after: Plan;
  target: PlanTarget;
  changed: boolean;
  dryRun: boolean;
  created: boolean;
  warnings: string[];
  /** The restore journal this change wrote (its `restore`), if any. */
  journal?: RestoreJournal | undefined;
  /** The settings read back after the switch (absent when nothing switched). */
  effective?: Effective | undefined;
}

/** What the group-policy warning says per operation; an operation without one warns of nothing. */
const POLICY_WARNING: Partial<Record<AuditOperation, string>> = {
  set_power_plan: 'Group policy sets the power plan here; the next policy refresh will revert this change.',
  hold_power_plan: 'Group policy sets the power plan here; the next policy refresh may revert the held plan.',
  compare_power_plans:
    'Group policy sets the plan here; a policy refresh during the comparison would disturb it.',
};

/** What a dry run calls the change it would refuse. */
const SUBJECT: Partial<Record<AuditOperation, string>> = { compare_power_plans: 'comparison' };

const owedMessage = (owed: RestoreJournal, tolerates: 'holds' | 'none'): string | undefined => {
  const { alive } = byLiveness(owed.holds, Date.now());
  if (owed.kind === 'holds' && alive.length) {
    if (tolerates === 'holds') return undefined;
    return `The plan is held (${alive.map((h) => `${h.id} until ${h.expiresAt}`).join(', ')}); a comparison would switch it. Release the holds first (release_power_plan).`;
  }
  if (owed.kind === 'holds' && tolerates === 'holds') return undefined;
  const after = owed.kind === 'comparison' ? ' after an interrupted comparison' : '';
  return `A restore of ${owed.restorePlanName} (${owed.restorePlanId})${after} is still owed (${owed.restoreError ?? 'pending'}); it is retried, try again later.`;
};

/**
 * The preconditions of every change, in order. The caller's policy (`intent.policy`) runs at the
 * `policy` step. A refusal is a thrown PowerPlanError; nothing has changed then.
 */
export const PRECONDITIONS: readonly { name: string; check: Precondition }[] = [
  {
    name: 'restore owed',
    check: (c) => {
      const tolerates = c.intent.tolerates ?? 'any';
      if (!c.owed || tolerates === 'any' || c.intent.dryRun) return;
      const message = owedMessage(c.owed, tolerates);
      if (message) throw new PowerPlanError('conflict', message);
    },
  },
  {
    name: 'policy',
    check: async (c) => {
      for (const rule of c.intent.policy ?? []) await rule(c);
    },
  },
  {
    name: 'canSet',
    check: async (c) => {
      if (c.intent.dryRun || !c.switches || (c.intent.canSet ?? 'refuse') !== 'refuse') return;
      const state = await c.state();
      if (!state.canSet)
        throw new PowerPlanError(
          'forbidden',
          state.cannotSetReason ?? 'The power plan cannot be changed here.',
        );
    },
  },
  {
    name: 'group policy',
    check: async (c) => {
      const text = POLICY_WARNING[c.intent.operation];
      if (text && (await c.state()).policyManaged) c.warnings.push(text);
    },
  },
  {
    name: 'dry-run verdict',
    check: async (c) => {
      if (!c.intent.dryRun || !c.switches) return;
      const state = await c.state();
      if (!state.canSet) {
        const subject = SUBJECT[c.intent.operation] ?? 'change';
        c.warnings.push(`The ${subject} would be refused: ${state.cannotSetReason ?? 'not allowed here'}`);
      }
    },
  },
];

/**
 * The checks after every switch, in order. The read-back comes first: the switch counts only when
 * the system says the plan is in force.
 */
export const VERIFICATIONS: readonly { name: string; verify: Verification }[] = [
  {
    name: 'read-back',
    verify: async (s, { backend }) => {
      s.plans = await backend.listPlans();
      s.after = s.plans.find((p) => p.active);
      const { target } = s.change;
      if (s.after?.id !== target.id) {
        throw new PowerPlanError(
          'os_error',
          `The plan did not change: ${s.after ? `${s.after.name} (${s.after.id})` : 'no plan'} is in force after switching to ${target.name} (${target.id}).`,
        );
      }
    },
  },
  {
    // Requested versus effective: a plan in force whose settings did not all take effect is still
    // a change; its mismatches are audited and answered.
    name: 'effective settings',
    verify: async (s, { readBack }) => {
      s.effective = await readBack(s.change.target.id);
    },
  },
];

const creatable = (s: string): CreatableKind | undefined => {
  const k = s.trim().toLowerCase();
  return isKind(k) && (k === 'ultimate-performance' || k === 'high-performance') ? k : undefined;
};

export interface PlanChangeOptions {
  store: Store;
  backend: PowerBackend;
  log: Logger;
  config: Pick<Config, 'lockStaleSeconds'>;
}

/** The plan lock held: the changes of one run (a comparison's steps and restore, a release). */
export interface LockedChanges {
  /** The restore journal in force once settled. */
  readonly owed: RestoreJournal | undefined;
  /** Checks an intent without changing anything (a comparison's checks before it starts). */
  check(intent: ChangeIntent): Promise<Change>;
  change(intent: ChangeIntent): Promise<ChangeOutcome>;
  /** Puts the journal's plan back (see `PlanChangeService.restore`). */
  restore(who: Who, j: RestoreJournal, input: Record<string, unknown>): Promise<RestoreOutcome>;
  /** Writes what is owed without a switch (a comparison's journal, a released hold), with its record. */
  owe(journal: RestoreJournal, who?: Who, entry?: AuditEntry): Promise<void>;
  /** Writes one record of something that changed no plan (a hold released while others remain). */
  record(who: Who, entry: AuditEntry): Promise<void>;
}

export interface RestoreOutcome {
  restoredPlan: Plan | null;
  error?: string;
}

export class PlanChangeService {
  /** Serialises every change of the active plan, in this process and across processes. */
  readonly lock: Lock;
  private readonly store: Store;
  private readonly backend: PowerBackend;
  private readonly log: Logger;

  constructor(o: PlanChangeOptions) {
    this.store = o.store;
    this.backend = o.backend;
    this.log = o.log;
    this.lock = new Lock(
      'The power plan',
      new FileLock(join(o.store.dir, 'plan.lock'), {
        code: 'conflict',
        staleMs: o.config.lockStaleSeconds * 1000,
        heldMessage: (h) =>
          `The power plan is being changed by ${h.what} (process ${h.pid || 'starting'}, since ${h.startedAt}); try again when it has finished.`,
      }),
    );
  }

  /** Writes one audit record; every plan change and attempted change is recorded this way. */
  async audit(who: Who, entry: AuditEntry): Promise<void> {
    await this.store.append('audit.jsonl', {
      time: new Date().toISOString(),
      caller: who === 'service' ? 'service' : who.name,
      ...(who !== 'service' && who.remote ? { remote: who.remote } : {}),
      operation: entry.operation,
      input: entry.input,
      before: entry.before,
      after: entry.after,
      result: entry.result,
      ...(entry.error !== undefined ? { error: entry.error } : {}),
      ...(entry.mismatches?.length ? { mismatches: entry.mismatches } : {}),
    });
  }

  /**
   * Requested versus effective: reads back the settings `planId` should have put in force, keeps
   * the answer for the active plan's read model, and never fails the switch (a read that fails is
   * "not checked", logged).
   */
  async readBack(planId: string): Promise<Effective> {
    let effective: Effective;
    try {
      effective = (await this.backend.checkEffective?.(planId)) ?? notChecked();
    } catch (e) {
      this.log.warn('reading back the settings failed', { planId, error: errorMessage(e) });
      effective = notChecked();
    }
    await this.store
      .write(EFFECTIVE, { planId, checkedAt: new Date().toISOString(), effective })
      .catch((e) => this.log.warn('keeping the read-back failed', { error: errorMessage(e) }));
    if (!effective.matches) {
      this.log.warn('the plan did not fully take effect', {
        planId,
        mismatches: effective.mismatches.map((m) => m.setting),
      });
    }
    return effective;
  }

  /** The last read-back, when it was about `planId` (the plan in force). */
  async lastEffective(planId: string): Promise<Effective | undefined> {
    const last = await this.store.read(EFFECTIVE, LastEffective).catch(() => undefined);
    return last?.planId === planId ? last.effective : undefined;
  }

  /** The one lookup of a plan reference (id, alias, kind, name) against the plans here. */
  resolve(ref: string, plans: readonly Plan[]): Plan {
    return resolvePlan(ref, plans, this.backend.aliases?.() ?? {});
  }

  /** The restore journal (after migrating the journals of an earlier version). */
  async journal(): Promise<RestoreJournal | undefined> {
    await migrateLegacyJournals(this.store, this.log);
    return this.store.read(JOURNAL, RestoreJournal);
  }

  /**
   * Runs one change: under the plan lock after settling (a dry run takes no lock and changes
   * nothing). A second caller waits up to two seconds, then gets 409 naming the holder.
   */
  async change(intent: ChangeIntent): Promise<ChangeOutcome> {
    if (intent.dryRun) return this.apply(intent, await this.journal());
    return this.session(
      `${intent.operation} (${intent.who === 'service' ? 'service' : intent.who.name})`,
      (s) => s.change(intent),
    );
  }

  /**
   * Runs `fn` under the plan lock, after settling what is owed: for a run of several changes (a
   * comparison) or changes of what is owed (a release). A second caller waits up to `waitMs`,
   * then gets 409 naming the holder.
   */
  session<T>(owner: string, fn: (s: LockedChanges) => Promise<T>, waitMs?: number): Promise<T> {
    return this.lock.run(
      owner,
      async () => {
        await this.settleLocked();
        const owed = await this.journal();
        return fn({
          owed,
          check: (intent) => this.prepare(intent, owed),
          change: (intent) => this.apply(intent, owed),
          restore: (who, j, input) => this.restore(who, j, input),
          owe: async (journal, who, entry) => {
            await this.store.write(JOURNAL, journal);
            if (who && entry) await this.audit(who, entry);
          },
          record: (who, entry) => this.audit(who, entry),
        });
      },
      waitMs,
    );
  }

  /** Checks an intent without the lock and without changing anything (a dry run's verdict). */
  async check(intent: ChangeIntent): Promise<Change> {
    return this.prepare(intent, await this.journal());
  }

  /** Settles what is owed (holds that expired, a dead comparison's restore) under the plan lock. */
  settle(owner: string): Promise<void> {
    return this.session(owner, async () => {});
  }

  /** Resolve and check: the change as the preconditions leave it (refusals throw). */
  private async prepare(intent: ChangeIntent, owed: RestoreJournal | undefined): Promise<Change> {
    const plans = await this.backend.listPlans();
    const before = plans.find((p) => p.active);
    let cached: Promise<ActivePlan> | undefined;
    const state = () => {
      cached ??= this.backend.getActive();
      return cached;
    };
    if (!before && typeof intent.plan === 'string') {
      throw new PowerPlanError(
        'unsupported',
        (await state()).cannotSetReason ?? 'This system exposes no power plans.',
      );
    }
    let created = false;
    let target: PlanTarget;
    if (typeof intent.plan !== 'string') target = intent.plan;
    else {
      const found = await this.findOrCreate(intent, plans);
      target = found.target;
      created = found.created;
    }
    const change: Change = {
      intent,
      plans,
      before,
      target,
      owed,
      switches: before?.id !== target.id,
      state,
      warnings: [],
      clearJournal: false,
      followUps: [],
      endEnforcement: undefined,
      created,
    };
    if (intent.checked) return change;
    for (const p of PRECONDITIONS) await p.check(change);
    return change;
  }

  /** Finds the target plan; creates a missing well-known one when the intent allows (never in a dry run). */
  private async findOrCreate(
    intent: ChangeIntent,
    plans: Plan[],
  ): Promise<{ target: PlanTarget; created: boolean }> {
    const ref = intent.plan as string;
    try {
      return { target: this.resolve(ref, plans), created: false };
    } catch (e) {
      const kind = creatable(ref);
      if (!(e instanceof PowerPlanError) || e.code !== 'not_found' || !kind) throw e;
      const caps = await this.backend.capabilities();
      if (!caps.createPlan || !this.backend.createPlan) throw e;
      if (!intent.create) {
        throw new PowerPlanError(
          'not_found',
          `${e.message} The ${kind} plan is not installed here; repeat with create: true (CLI: --create) to create it from the Windows template.`,
          e.details,
        );
      }
      if (intent.dryRun) {
        return { target: { id: '(new)', name: kind, kind, active: true, builtin: false }, created: true };
      }
      const made = await this.backend.createPlan(kind);
      await this.audit(intent.who, {
        operation: intent.operation,
        input: intent.input,
        before: null,
        after: { id: made.id, name: made.name },
        result: 'created',
      });
      return { target: made, created: true };
    }
  }

  /** The steps after the checks (the caller holds the lock unless it is a dry run). */
  private async apply(intent: ChangeIntent, owed: RestoreJournal | undefined): Promise<ChangeOutcome> {
    const c = await this.prepare(intent, owed);
    const { before, target } = c;
    const restore = intent.dryRun ? undefined : intent.restore?.(c);
    const outcome = (changed: boolean, after: Plan): ChangeOutcome => ({
      before,
      after,
      target,
      changed,
      dryRun: intent.dryRun ?? false,
      created: c.created,
      warnings: c.warnings,
      ...(restore ? { journal: restore } : {}),
    });
    if (intent.dryRun)
      return outcome(c.switches, c.switches ? { ...(target as Plan), active: true } : before!);
    const result =
      intent.operation === 'compare_restore' || intent.operation === 'hold_restore' ? 'restored' : 'changed';
    const entry: AuditEntry = {
      operation: intent.operation,
      input: intent.input,
      before: auditPlan(before),
      after: auditPlan(c.switches ? target : before),
      result,
    };
    if (!c.switches) {
      if (restore) await this.store.write(JOURNAL, restore);
      if (intent.recordUnchanged) await this.audit(intent.who, entry);
      await this.finish(intent.who, c);
      return outcome(false, before!);
    }
    const previous = restore ? await this.store.read(JOURNAL, RestoreJournal) : undefined;
    if (restore) await this.store.write(JOURNAL, restore);
    await this.store.write(PENDING, {
      version: 1,
      startedAt: new Date().toISOString(),
      caller: intent.who === 'service' ? 'service' : intent.who.name,
      ...(intent.who !== 'service' && intent.who.remote ? { remote: intent.who.remote } : {}),
      entry,
      followUps: c.followUps,
      clearJournal: c.clearJournal,
      ...(c.endEnforcement ? { endEnforcement: c.endEnforcement } : {}),
    } satisfies PendingChange);
    const switched: Switched = { change: c, plans: [], after: undefined };
    try {
      await this.backend.setActive(target.id);
      const ctx: VerifyContext = { backend: this.backend, readBack: (id) => this.readBack(id) };
      for (const v of VERIFICATIONS) await v.verify(switched, ctx);
    } catch (e) {
      // Roll back what this change wrote; a retried failure (a restore that keeps failing) is audited once.
      if (restore) {
        if (previous) await this.store.write(JOURNAL, previous);
        else await this.store.remove(JOURNAL);
      }
      if (errorMessage(e) !== intent.lastError) {
        await this.audit(intent.who, {
          ...entry,
          after: auditPlan(target),
          result: 'failed',
          error: errorMessage(e),
        });
      }
      await this.store.remove(PENDING);
      throw e;
    }
    const after = switched.after!;
    const mismatches = switched.effective?.mismatches ?? [];
    await this.audit(intent.who, {
      ...entry,
      after: auditPlan(after),
      ...(mismatches.length ? { mismatches } : {}),
    });
    await this.finish(intent.who, c);
    await this.store.remove(PENDING);
    return { ...outcome(true, after), ...(switched.effective ? { effective: switched.effective } : {}) };
  }

  /** What follows a successful change: enforcement turned off, the journal ended, the follow-up records. */
  private async finish(
    who: Who,
    c: {
      clearJournal: boolean;
      followUps: readonly AuditEntry[];
      endEnforcement?: { planId: string; planName: string } | undefined;
    },
  ): Promise<void> {
    if (c.endEnforcement) {
      // desired.json as set_desired_power_plan writes it: the same plan, enforcement off.
      await this.store.write('desired.json', {
        ...c.endEnforcement,
        enforce: false,
        setAt: new Date().toISOString(),
        setBy: who === 'service' ? 'service' : who.name,
      } satisfies DesiredFile);
    }
    for (const f of c.followUps) await this.audit(who, f);
    if (c.clearJournal) await this.store.remove(JOURNAL);
  }

  /**
   * Puts the journal's plan back and removes the journal (the caller holds the lock). A failure
   * keeps the journal (retried by the next plan change, the hold timer and the next start) and is
   * audited once per distinct error; a plan that no longer exists cannot come back, so its journal
   * is dropped.
   */
  private async restore(
    who: Who,
    j: RestoreJournal,
    input: Record<string, unknown>,
  ): Promise<RestoreOutcome> {
    if (j.holds.length) await this.store.write(JOURNAL, { ...j, holds: [] });
    try {
      const { after } = await this.apply(
        {
          who,
          operation: j.kind === 'holds' ? 'hold_restore' : 'compare_restore',
          plan: { id: j.restorePlanId, name: j.restorePlanName },
          input: { ...input, restorePlanId: j.restorePlanId, kind: j.kind },
          recordUnchanged: true,
          lastError: j.restoreError,
          checked: true,
        },
        j,
      );
      await this.store.remove(JOURNAL);
      this.log.info('plan restored', { kind: j.kind, planId: j.restorePlanId });
      return { restoredPlan: after };
    } catch (e) {
      const error = errorMessage(e);
      const gone = e instanceof PowerPlanError && e.code === 'not_found';
      if (gone) await this.store.remove(JOURNAL);
      else await this.store.write(JOURNAL, { ...j, holds: [], restoreError: error });
      if (error !== j.restoreError) this.log.error('restoring the plan failed', { error, willRetry: !gone });
      return { restoredPlan: null, error };
    }
  }

  /**
   * A change left in flight by a dead process (the caller holds the lock): its record is written
   * when the switch happened and is not in the audit trail yet, a `failed` record when it did not.
   */
  private async settlePending(): Promise<void> {
    const pending = await this.store.read(PENDING, PendingChange);
    if (!pending) return;
    const who: Who = {
      name: pending.caller,
      scopes: [],
      ...(pending.remote ? { remote: pending.remote } : {}),
    };
    const author: Who = pending.caller === 'service' ? 'service' : who;
    if (!(await alreadyAudited(this.store.audit, pending))) {
      const now = (await this.backend.listPlans()).find((p) => p.active);
      const happened = now !== undefined && now.id === pending.entry.after?.id;
      if (happened) {
        await this.audit(author, pending.entry);
        await this.finish(author, pending);
      } else {
        await this.audit(author, {
          ...pending.entry,
          result: 'failed',
          error: `The process making this change stopped before the switch took effect (${now ? `${now.name} (${now.id})` : 'no plan'} is in force).`,
        });
      }
      this.log.warn('interrupted plan change settled', {
        operation: pending.entry.operation,
        switched: happened,
      });
    }
    await this.store.remove(PENDING);
  }

  /**
   * Settles what is owed (the caller holds the lock): a change left in flight, the journal of a
   * comparison that is no longer running (restored), expired holds (ended; restored when none
   * remain).
   */
  private async settleLocked(now = Date.now()): Promise<void> {
    await this.settlePending();
    const j = await this.journal();
    if (!j) return;
    if (j.kind === 'comparison') {
      await this.restore('service', j, { reason: 'journal left behind by an interrupted comparison' });
      return;
    }
    const { alive, expired } = byLiveness(j.holds, now);
    if (alive.length === 0) {
      await this.restore('service', j, { holds: expired.map((h) => h.id), reason: 'holds ended' });
      return;
    }
    if (expired.length === 0) return;
    await this.store.write(JOURNAL, { ...j, holds: alive });
    for (const h of expired) {
      await this.audit('service', {
        operation: 'hold_expire',
        input: { id: h.id, planId: h.planId, remaining: alive.length },
        before: null,
        after: null,
        result: 'changed',
      });
    }
  }

  /**
   * Start-up recovery: settle what is owed and, when holds are in force but their plan is not
   * (a crash between the journal and the switch, or a change behind the service's back), put the
   * held plan back. A lock held by another live process means that process is at work: left alone.
   */
  async recover(): Promise<void> {
    try {
      await this.session('start-up recovery', async (s) => {
        const held = byLiveness(s.owed?.holds ?? [], Date.now()).alive;
        if (!held.length) return;
        await s.change({
          who: 'service',
          operation: 'hold_recover',
          plan: { id: held[0]!.planId, name: held[0]!.planName },
          input: { holds: held.map((h) => h.id) },
          checked: true,
        });
      });
    } catch (e) {
      this.log.error('start-up recovery failed', { error: errorMessage(e) });
    }
  }
}
