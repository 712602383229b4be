/**
 * Holds: keep a plan in force for a while (a maintenance window), then restore the plan that was in
 * force before the first hold. The holds live in the restore journal (restore-journal.ts), written
 * before the plan changes, so an expiry or a restore also happens after a restart or a crash.
 *
 * Overlapping holds must name the same plan: a hold for another plan while holds are in force is
 * refused (409), so a running job never has its plan switched under it. The restore happens when
 * the last hold ends. Holds state their policy as change intents and preconditions of the
 * plan-change service (which switches, journals and audits); the rules of a hold's life (live,
 * expired) are in domain/holds.ts, their rules as preconditions of a change in hold-rules.ts.
 */
import { randomUUID } from 'node:crypto';
import { errorMessage, PowerPlanError } from '../domain/errors.ts';
import {
  type HoldList,
  type HoldRecord,
  type HoldResult,
  isLive,
  type ReleaseResult,
  toHold,
} from '../domain/holds.ts';
import type { Caller } from '../domain/scopes.ts';
import type { Logger } from '../lib/log.ts';
import type { Schedule } from '../lib/schedule.ts';
import type { Store } from '../lib/store.ts';
import { liveIn, sameHeldPlan, withinCap } from './hold-rules.ts';
import type { PlanChangeService } from './plan-change.ts';
import { JOURNAL, owing, type RestoreJournal } from './restore-journal.ts';

/**
 * The retry pace of a failing restore, and the poll of a state directory that cannot be watched
 * (holds taken by another process, the CLI, are then seen this late).
 */
const POLL_MS = 5_000;
const SCHEDULE_JOB = 'hold expiry';

/** True when the journal asks for work now: an expired hold, a restore still owed, a dead comparison's restore. */
const due = (j: RestoreJournal | undefined, now: number) =>
  j !== undefined && (j.kind !== 'holds' || j.holds.length === 0 || j.holds.some((h) => !isLive(h, now)));

export interface HoldsOptions {
  planChange: PlanChangeService;
  log: Logger;
  /** Where the restore journal lives: watched, so a hold taken by another process is seen at once. */
  store: Store;
  /** The service's one timer (shared with the desired-state checks). */
  schedule: Schedule;
  /** Holds in force at once (POWERPLAN_MAX_HOLDS); one more is refused. */
  maxHolds: number;
}

export class HoldsService {
  private readonly pc: PlanChangeService;
  private readonly log: Logger;
  private readonly store: Store;
  private readonly timers: Schedule;
  private readonly maxHolds: number;
  private generation = 0;
  private running = false;
  private unwatch: (() => void) | undefined;

  constructor(o: HoldsOptions) {
    this.pc = o.planChange;
    this.log = o.log;
    this.store = o.store;
    this.timers = o.schedule;
    this.maxHolds = o.maxHolds;
  }

  /** The holds in force now, without changing anything (for read-only answers and dry runs). */
  async live(now = Date.now()): Promise<HoldRecord[]> {
    return liveIn(await this.pc.journal(), now);
  }

  /** Settles under the plan lock when something is due; a busy lock is left for the next attempt. */
  private async settleIfDue(): Promise<void> {
    if (!due(await this.pc.journal(), Date.now())) return;
    await this.pc.settle('hold expiry');
  }

  async list(): Promise<HoldList> {
    try {
      await this.settleIfDue();
    } catch (e) {
      this.log.debug('settling holds deferred', { error: errorMessage(e) });
    }
    const j = await this.pc.journal();
    const journal = j?.kind === 'holds' ? j : undefined;
    const now = Date.now();
    const alive = liveIn(journal, now);
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
  }

  /**
   * hold_power_plan: one change through the plan-change service whose restore is the hold added
   * to the journal (a restore still owed, a journal without holds, keeps the plan from before the
   * first hold).
   */
  async create(
    caller: Caller,
    input: { plan: string; seconds: number; reason?: string | undefined },
  ): Promise<HoldResult> {
    const id = randomUUID();
    const r = await this.pc.change({
      who: caller,
      operation: 'hold_power_plan',
      plan: input.plan,
      input: { plan: input.plan, durationSeconds: input.seconds, reason: input.reason, id },
      tolerates: 'holds',
      policy: [sameHeldPlan, withinCap(this.maxHolds)],
      recordUnchanged: true,
      // The hold joins those in force (or a restore still owed, which keeps its plan).
      restore: (c) => {
        const now = Date.now();
        const record: HoldRecord = {
          id,
          planId: c.target.id,
          planName: c.target.name,
          ...(input.reason ? { reason: input.reason } : {}),
          createdAt: new Date(now).toISOString(),
          expiresAt: new Date(now + input.seconds * 1000).toISOString(),
          createdBy: caller.name,
        };
        return c.owed
          ? { ...c.owed, holds: [...c.owed.holds, record] }
          : owing('holds', c.before!, caller.name, { holds: [record], createdAt: record.createdAt });
      },
    });
    this.kick();
    const journal = r.journal!;
    return {
      hold: toHold(journal.holds.find((h) => h.id === id)!, Date.now()),
      changed: r.changed,
      before: r.before!,
      after: r.after,
      restorePlanId: journal.restorePlanId,
      ...(r.warnings.length ? { warnings: r.warnings } : {}),
    };
  }

  async release(caller: Caller, id: string): Promise<ReleaseResult> {
    return this.pc.session(`release_power_plan (${caller.name})`, async (s) => {
      const journal = s.owed;
      const hold = journal?.kind === 'holds' ? journal.holds.find((h) => h.id === id) : undefined;
      if (!journal || !hold) {
        throw new PowerPlanError(
          'not_found',
          `No hold '${id}' is in force (it may have expired or been released); list_holds shows the holds in force.`,
        );
      }
      const now = Date.now();
      const remaining = journal.holds.filter((h) => h.id !== id);
      await s.record(caller, {
        operation: 'release_power_plan',
        input: { id, planId: hold.planId, remaining: remaining.length },
        before: null,
        after: null,
        result: 'changed',
      });
      if (remaining.length) {
        await s.owe({ ...journal, holds: remaining });
        return {
          released: toHold(hold, now),
          remaining: remaining.map((h) => toHold(h, now)),
          restored: false,
          restoredPlan: null,
        };
      }
      const { restoredPlan, error } = await s.restore(caller, journal, { holds: [id], reason: 'released' });
      return {
        released: toHold(hold, now),
        remaining: [],
        restored: restoredPlan !== null,
        restoredPlan,
        ...(error ? { warnings: [`The plan could not be restored (it will be retried): ${error}`] } : {}),
      };
    });
  }

  /** How many holds are in force and the seconds until the next and the last end: for /metrics. */
  async snapshot(): Promise<{
    active: number;
    secondsUntilExpiry: number | null;
    secondsUntilRestore: number | null;
  }> {
    const now = Date.now();
    const left = (await this.live(now)).map((h) => (Date.parse(h.expiresAt) - now) / 1000);
    return {
      active: left.length,
      secondsUntilExpiry: left.length ? Math.min(...left) : null,
      secondsUntilRestore: left.length ? Math.max(...left) : null,
    };
  }

  /**
   * The expiry timer of a running server: wakes at the next expiry (or to retry a failing restore),
   * and not at all while nothing is held or owed. A change of the restore journal (a hold taken by
   * a CLI run) reschedules at once; only a state directory that cannot be watched is polled.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unwatch = this.store.watch([JOURNAL], () => this.kick());
    void this.schedule();
  }

  stop(): void {
    this.running = false;
    this.unwatch?.();
    this.unwatch = undefined;
    this.timers.clear(SCHEDULE_JOB);
  }

  /** Wakes the timer after a change, so a short hold ends on time. */
  private kick(): void {
    if (this.running) void this.schedule();
  }

  private async schedule(): Promise<void> {
    const mine = ++this.generation;
    const now = Date.now();
    let at = this.unwatch ? Number.POSITIVE_INFINITY : now + POLL_MS;
    try {
      const j = await this.pc.journal();
      // A failing restore is retried at the poll pace, not in a tight loop.
      if (due(j, now)) at = Math.min(at, j?.restoreError ? now + POLL_MS : now);
      for (const h of j?.holds ?? []) at = Math.min(at, Date.parse(h.expiresAt));
    } catch (e) {
      this.log.warn('reading the restore journal failed', { error: errorMessage(e) });
      at = Math.min(at, now + POLL_MS);
    }
    if (!this.running || mine !== this.generation) return;
    if (at === Number.POSITIVE_INFINITY) this.timers.clear(SCHEDULE_JOB);
    else this.timers.set(SCHEDULE_JOB, Math.max(at, now + 20), () => void this.tick());
  }

  private async tick(): Promise<void> {
    try {
      await this.settleIfDue();
    } catch (e) {
      this.log.warn('ending expired holds failed; retrying', { error: errorMessage(e) });
    }
    if (this.running) await this.schedule();
  }
}
