/**
 * The plan-change service: the one path by which the active plan changes. It owns the plan lock,
 * the switch (the only call of `backend.setActive` outside `platform/`), the read-back, the audit
 * record (one shape for every caller) and the restore journal with its recovery. set_power_plan,
 * holds (start, release, expiry, recovery), desired-state enforcement and comparisons (each step
 * and the restore) all come through here.
 *
 * Every `run` first settles what is owed: a comparison journal left by a dead process is restored,
 * expired holds end and, when none remain, the plan from before the first hold is restored. The
 * same settling, plus putting a held plan back, is the recovery at start.
 */
import { join } from 'node:path';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { AuditOperation, AuditPlan, AuditResult } from '../domain/audit.ts';
import { errorMessage, PowerPlanError } from '../domain/errors.ts';
import type { HoldRecord } from '../domain/holds.ts';
import { Effective, type Mismatch, notChecked } from '../domain/idle.ts';
import type { Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { FileLock } from '../lib/file-lock.ts';
import { Lock } from '../lib/lock.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { JOURNAL, migrateLegacyJournals, RestoreJournal } from './restore-journal.ts';

/** Who acts: a caller, or the service on its own (restore, expiry, enforcement, recovery). */
export type Who = Caller | 'service';

export interface AuditEntry {
  operation: AuditOperation;
  input: Record<string, unknown>;
  before: AuditPlan;
  after: AuditPlan;
  result: AuditResult;
  error?: string;
  mismatches?: Mismatch[];
}

/** The read-back of the last switch, kept so the active plan, the page and the fleet can show it. */
const LastEffective = z.object({ planId: z.string(), checkedAt: z.string(), effective: Effective });
const EFFECTIVE = 'effective.json';

/** A plan as the audit trail names it. */
export const auditPlan = (p: { id: string; name?: string } | null | undefined): AuditPlan =>
  p ? { id: p.id, name: p.name ?? p.id } : null;

const isLive = (h: HoldRecord, now: number) => Date.parse(h.expiresAt) > now;

export interface PlanChangeOptions {
  store: Store;
  backend: PowerBackend;
  log: Logger;
  config: Pick<Config, 'lockStaleSeconds'>;
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

  /** The plans and the one in force (an error when the system exposes none). */
  async active(): Promise<{ plans: Plan[]; active: Plan }> {
    const plans = await this.backend.listPlans();
    const active = plans.find((p) => p.active);
    if (!active) {
      const state = await this.backend.getActive();
      throw new PowerPlanError('unsupported', state.cannotSetReason ?? 'This system exposes no power plans.');
    }
    return { plans, active };
  }

  /**
   * Runs `fn` under the plan lock, after settling what is owed. A second caller waits up to
   * `waitMs`, then gets 409 naming the holder.
   */
  run<T>(owner: string, fn: () => Promise<T>, waitMs?: number): Promise<T> {
    return this.lock.run(
      owner,
      async () => {
        await this.settleLocked();
        return fn();
      },
      waitMs,
    );
  }

  /**
   * Makes `target` the active plan (the caller holds the lock): switch, read back, audit. Asking
   * for the plan in force changes and audits nothing. A failure is audited and thrown.
   */
  async switchTo(
    who: Who,
    operation: AuditOperation,
    target: Plan | { id: string; name: string },
    input: Record<string, unknown>,
    opts: { before?: Plan | undefined; lastError?: string | undefined } = {},
  ): Promise<{ before: Plan | undefined; after: Plan; changed: boolean; effective?: Effective }> {
    const before = 'before' in opts ? opts.before : (await this.backend.listPlans()).find((p) => p.active);
    if (before?.id === target.id) return { before, after: before, changed: false };
    const fail = async (e: unknown): Promise<never> => {
      // A retried failure (a restore that keeps failing) is audited once per distinct error.
      if (errorMessage(e) === opts.lastError) throw e;
      await this.audit(who, {
        operation,
        input,
        before: auditPlan(before),
        after: auditPlan(target),
        result: 'failed',
        error: errorMessage(e),
      });
      throw e;
    };
    try {
      await this.backend.setActive(target.id);
    } catch (e) {
      return fail(e);
    }
    // Read back: the switch counts only when the system says the plan is in force.
    const now = (await this.backend.listPlans()).find((p) => p.active);
    if (now?.id !== target.id) {
      return fail(
        new PowerPlanError(
          'os_error',
          `The plan did not change: ${now ? `${now.name} (${now.id})` : 'no plan'} is in force after switching to ${target.name} (${target.id}).`,
        ),
      );
    }
    const effective = await this.readBack(target.id);
    await this.audit(who, {
      operation,
      input,
      before: auditPlan(before),
      after: auditPlan(now),
      result: operation === 'compare_restore' || operation === 'hold_restore' ? 'restored' : 'changed',
      mismatches: effective.mismatches,
    });
    return { before, after: now, changed: true, effective };
  }

  /** The restore journal (after migrating the journals of an earlier version). */
  async journal(): Promise<RestoreJournal | undefined> {
    await migrateLegacyJournals(this.store, this.log);
    return this.store.read(JOURNAL, RestoreJournal);
  }

  /** Writes the journal before the plan changes (the caller holds the lock). */
  async writeJournal(j: RestoreJournal): Promise<void> {
    await this.store.write(JOURNAL, j);
  }

  async clearJournal(): Promise<void> {
    await this.store.remove(JOURNAL);
  }

  /**
   * Puts the journal's plan back and removes the journal (the caller holds the lock). A failure
   * keeps the journal (retried by the next plan change, the hold timer and the next start) and is
   * audited once per distinct error; a plan that no longer exists cannot come back, so its journal
   * is dropped.
   */
  async restore(
    who: Who,
    j: RestoreJournal,
    input: Record<string, unknown>,
  ): Promise<{ restoredPlan: Plan | null; error?: string }> {
    const operation = j.kind === 'holds' ? 'hold_restore' : 'compare_restore';
    if (j.holds.length) await this.writeJournal({ ...j, holds: [] });
    const target = { id: j.restorePlanId, name: j.restorePlanName };
    const fullInput = { ...input, restorePlanId: j.restorePlanId, kind: j.kind };
    try {
      const { after, changed } = await this.switchTo(who, operation, target, fullInput, {
        lastError: j.restoreError,
      });
      if (!changed) {
        // Already there: still the end of what was owed, recorded as such.
        await this.audit(who, {
          operation,
          input: fullInput,
          before: auditPlan(after),
          after: auditPlan(after),
          result: 'restored',
        });
      }
      await this.clearJournal();
      this.log.info('plan restored', { kind: j.kind, planId: j.restorePlanId });
      return { restoredPlan: after };
    } catch (e) {
      const error = errorMessage(e);
      const gone = e instanceof PowerPlanError && e.code === 'not_found';
      if (gone) await this.clearJournal();
      else await this.writeJournal({ ...j, holds: [], restoreError: error });
      if (error !== j.restoreError) this.log.error('restoring the plan failed', { error, willRetry: !gone });
      return { restoredPlan: null, error };
    }
  }

  /**
   * Settles what is owed (the caller holds the lock): restores the journal of a comparison that is
   * no longer running; ends expired holds and restores when none remain.
   */
  async settleLocked(now = Date.now()): Promise<void> {
    const j = await this.journal();
    if (!j) return;
    if (j.kind === 'comparison') {
      await this.restore('service', j, { reason: 'journal left behind by an interrupted comparison' });
      return;
    }
    const expired = j.holds.filter((h) => !isLive(h, now));
    const alive = j.holds.filter((h) => isLive(h, now));
    if (alive.length === 0) {
      await this.restore('service', j, { holds: expired.map((h) => h.id), reason: 'holds ended' });
      return;
    }
    if (expired.length === 0) return;
    await this.writeJournal({ ...j, holds: alive });
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
      await this.run('start-up recovery', async () => {
        const j = await this.journal();
        const held = (j?.holds ?? []).filter((h) => isLive(h, Date.now()));
        if (!held.length) return;
        const { active } = await this.active();
        if (active.id === held[0]!.planId) return;
        await this.switchTo(
          'service',
          'hold_recover',
          { id: held[0]!.planId, name: held[0]!.planName },
          { holds: held.map((h) => h.id) },
          { before: active },
        );
      });
    } catch (e) {
      this.log.error('start-up recovery failed', { error: errorMessage(e) });
    }
  }
}
