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
 *
 * This file holds the lock and the entries; the steps are in change-steps.ts, their rules in
 * change-checks.ts, the settling and restores in change-recovery.ts, the shapes in
 * change-intent.ts, the audit writer in audit-trail.ts and the read-back in read-back.ts.
 */
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { AuditOperation } from '../domain/audit.ts';
import { errorMessage } from '../domain/errors.ts';
import { byLiveness } from '../domain/holds.ts';
import type { Effective } from '../domain/idle.ts';
import type { Plan } from '../domain/schemas.ts';
import { FileLock } from '../lib/file-lock.ts';
import { Lock } from '../lib/lock.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { AuditTrail, type RefusalCounts } from './audit-trail.ts';
import type { AuditEntry, Change, ChangeIntent, ChangeOutcome, LockedChanges, Who } from './change-intent.ts';
import { Recovery } from './change-recovery.ts';
import { ChangeSteps } from './change-steps.ts';
import { ReadBack } from './read-back.ts';
import { JOURNAL, type RestoreJournal } from './restore-journal.ts';

export interface PlanChangeOptions {
  store: Store;
  backend: PowerBackend;
  log: Logger;
  config: Pick<Config, 'lockStaleSeconds' | 'auditRefusals'>;
}

export class PlanChangeService {
  /** Serialises every change of the active plan, in this process and across processes. */
  readonly lock: Lock;
  private readonly store: Store;
  private readonly log: Logger;
  private readonly trail: AuditTrail;
  private readonly effective: ReadBack;
  private readonly steps: ChangeSteps;
  private readonly recovery: Recovery;

  constructor(o: PlanChangeOptions) {
    this.store = o.store;
    this.log = o.log;
    this.trail = new AuditTrail({ ...o, refusalsPerMinute: o.config.auditRefusals });
    this.effective = new ReadBack(o);
    this.steps = new ChangeSteps({ ...o, trail: this.trail, readBack: this.effective });
    this.recovery = new Recovery({ ...o, trail: this.trail, steps: this.steps });
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
  audit(who: Who, entry: AuditEntry): Promise<void> {
    return this.trail.write(who, entry);
  }

  /**
   * Records a refused attempt to change a plan (invalid input, scope, conflict, lock busy, unknown
   * plan) as one `refused` record, rate-capped (audit-trail.ts); anything else is left alone.
   */
  refused(who: Who, operation: AuditOperation, input: unknown, e: unknown): Promise<void> {
    return this.trail.refused(who, operation, input, e);
  }

  /** Refused attempts seen by this process, and how many of them were summed up, not written. */
  get refusals(): RefusalCounts {
    return this.trail.counts;
  }

  /** Writes the summary of refusals left out so far (at stop). */
  flushRefusals(): Promise<void> {
    return this.trail.flush();
  }

  /** Requested versus effective: reads back and keeps the settings `planId` should have put in force. */
  readBack(planId: string): Promise<Effective> {
    return this.effective.read(planId);
  }

  /** The last read-back, when it was about `planId` (the plan in force). */
  lastEffective(planId: string): Promise<Effective | undefined> {
    return this.effective.last(planId);
  }

  /** The one lookup of a plan reference (id, alias, kind, name) against the plans here. */
  resolve(ref: string, plans: readonly Plan[]): Plan {
    return this.steps.resolve(ref, plans);
  }

  /** The restore journal (after migrating the journals of an earlier version). */
  journal(): Promise<RestoreJournal | undefined> {
    return this.recovery.journal();
  }

  /**
   * Runs one change: under the plan lock after settling (a dry run takes no lock and changes
   * nothing). A second caller waits up to two seconds, then gets 409 naming the holder.
   */
  async change(intent: ChangeIntent): Promise<ChangeOutcome> {
    if (intent.dryRun) return this.steps.apply(intent, await this.journal());
    try {
      return await this.session(
        `${intent.operation} (${intent.who === 'service' ? 'service' : intent.who.name})`,
        (s) => s.change(intent),
      );
    } catch (e) {
      // A caller's attempt refused by a precondition, the lock or the lookup: one record. (The
      // service's own retries, enforcement, are logged once per distinct error instead.)
      if (intent.who !== 'service') await this.refused(intent.who, intent.operation, intent.input, e);
      throw e;
    }
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
        await this.recovery.settle();
        const owed = await this.journal();
        return fn({
          owed,
          check: (intent) => this.steps.prepare(intent, owed),
          change: (intent) => this.steps.apply(intent, owed),
          restore: (who, j, input) => this.recovery.restore(who, j, input),
          owe: async (journal, who, entry) => {
            await this.store.write(JOURNAL, journal);
            if (who && entry) await this.trail.write(who, entry);
          },
          record: (who, entry) => this.trail.write(who, entry),
        });
      },
      waitMs,
    );
  }

  /** Checks an intent without the lock and without changing anything (a dry run's verdict). */
  async check(intent: ChangeIntent): Promise<Change> {
    return this.steps.prepare(intent, await this.journal());
  }

  /** Settles what is owed (holds that expired, a dead comparison's restore) under the plan lock. */
  settle(owner: string): Promise<void> {
    return this.session(owner, async () => {});
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
