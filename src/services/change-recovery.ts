/**
 * What a plan change settles before it starts, under the plan lock: a change left in flight by a
 * dead process (its record written, see pending-change.ts), the journal of a comparison that is no
 * longer running (restored), expired holds (ended; the plan restored when none remain). And the
 * restore itself: the journal's plan put back, as one more change through the same steps.
 */
import { errorMessage, PowerPlanError } from '../domain/errors.ts';
import { byLiveness } from '../domain/holds.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from '../platform/backend.ts';
import type { AuditTrail } from './audit-trail.ts';
import type { RestoreOutcome, Who } from './change-intent.ts';
import type { ChangeSteps } from './change-steps.ts';
import { alreadyAudited, PENDING, PendingChange } from './pending-change.ts';
import { JOURNAL, migrateLegacyJournals, RestoreJournal } from './restore-journal.ts';

export class Recovery {
  private readonly store: Store;
  private readonly backend: PowerBackend;
  private readonly log: Logger;
  private readonly trail: AuditTrail;
  private readonly steps: ChangeSteps;

  constructor(o: {
    store: Store;
    backend: PowerBackend;
    log: Logger;
    trail: AuditTrail;
    steps: ChangeSteps;
  }) {
    this.store = o.store;
    this.backend = o.backend;
    this.log = o.log;
    this.trail = o.trail;
    this.steps = o.steps;
  }

  /** The restore journal (after migrating the journals of an earlier version). */
  async journal(): Promise<RestoreJournal | undefined> {
    await migrateLegacyJournals(this.store, this.log);
    return this.store.read(JOURNAL, RestoreJournal);
  }

  /**
   * Puts the journal's plan back and removes the journal (the caller holds the lock). A failure
   * keeps the journal (retried by the next plan change, the hold timer and the next start) and is
   * audited once per distinct error; a plan that no longer exists cannot come back, so its journal
   * is dropped.
   */
  async restore(who: Who, j: RestoreJournal, input: Record<string, unknown>): Promise<RestoreOutcome> {
    if (j.holds.length) await this.store.write(JOURNAL, { ...j, holds: [] });
    try {
      const { after } = await this.steps.apply(
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
        await this.trail.write(author, pending.entry);
        await this.steps.finish(author, pending);
      } else {
        await this.trail.write(author, {
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
  async settle(now = Date.now()): Promise<void> {
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
      await this.trail.write('service', {
        operation: 'hold_expire',
        input: { id: h.id, planId: h.planId, remaining: alive.length },
        before: null,
        after: null,
        result: 'changed',
      });
    }
  }
}
