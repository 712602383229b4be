/**
 * The steps of one plan change after settling (plan-change.ts holds the lock and settles): resolve
 * the plan, check the preconditions, journal, switch, verify, audit, and on failure roll the
 * journal back and audit the failure. `backend.setActive` is called here and nowhere else outside
 * platform/.
 */
import type { DesiredFile } from '../domain/desired.ts';
import { errorMessage, PowerPlanError } from '../domain/errors.ts';
import type { ActivePlan, Plan } from '../domain/schemas.ts';
import type { Store } from '../lib/store.ts';
import type { CreatableKind, PowerBackend } from '../platform/backend.ts';
import { isKind, resolvePlan } from '../platform/resolve.ts';
import type { AuditTrail } from './audit-trail.ts';
import { PRECONDITIONS, VERIFICATIONS } from './change-checks.ts';
import {
  type AuditEntry,
  auditPlan,
  type Change,
  type ChangeIntent,
  type ChangeOutcome,
  type PlanTarget,
  type Switched,
  type VerifyContext,
  type Who,
} from './change-intent.ts';
import { PENDING, type PendingChange } from './pending-change.ts';
import type { ReadBack } from './read-back.ts';
import { JOURNAL, RestoreJournal } from './restore-journal.ts';

const creatable = (s: string): CreatableKind | undefined => {
  const k = s.trim().toLowerCase();
  return isKind(k) && (k === 'ultimate-performance' || k === 'high-performance') ? k : undefined;
};

export class ChangeSteps {
  private readonly store: Store;
  private readonly backend: PowerBackend;
  private readonly trail: AuditTrail;
  private readonly readBack: ReadBack;

  constructor(o: { store: Store; backend: PowerBackend; trail: AuditTrail; readBack: ReadBack }) {
    this.store = o.store;
    this.backend = o.backend;
    this.trail = o.trail;
    this.readBack = o.readBack;
  }

  /** The one lookup of a plan reference (id, alias, kind, name) against the plans here. */
  resolve(ref: string, plans: readonly Plan[]): Plan {
    return resolvePlan(ref, plans, this.backend.aliases?.() ?? {});
  }

  /** Resolve and check: the change as the preconditions leave it (refusals throw). */
  async prepare(intent: ChangeIntent, owed: RestoreJournal | undefined): Promise<Change> {
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
      await this.trail.write(intent.who, {
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
  async apply(intent: ChangeIntent, owed: RestoreJournal | undefined): Promise<ChangeOutcome> {
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
      if (intent.recordUnchanged) await this.trail.write(intent.who, entry);
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
      const ctx: VerifyContext = { backend: this.backend, readBack: (id) => this.readBack.read(id) };
      for (const v of VERIFICATIONS) await v.verify(switched, ctx);
    } catch (e) {
      // Roll back what this change wrote; a retried failure (a restore that keeps failing) is audited once.
      if (restore) {
        if (previous) await this.store.write(JOURNAL, previous);
        else await this.store.remove(JOURNAL);
      }
      this.trail.recordedAlready(e); // a failed switch, not a refusal
      if (errorMessage(e) !== intent.lastError) {
        await this.trail.write(intent.who, {
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
    await this.trail.write(intent.who, {
      ...entry,
      after: auditPlan(after),
      ...(mismatches.length ? { mismatches } : {}),
    });
    await this.finish(intent.who, c);
    await this.store.remove(PENDING);
    return { ...outcome(true, after), ...(switched.effective ? { effective: switched.effective } : {}) };
  }

  /** What follows a successful change: enforcement turned off, the journal ended, the follow-up records. */
  async finish(
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
    for (const f of c.followUps) await this.trail.write(who, f);
    if (c.clearJournal) await this.store.remove(JOURNAL);
  }
}
