/**
 * Desired state: an optional plan the service keeps an eye on. A checker in the running server
 * compares it with the plan in force every POWERPLAN_DESIRED_INTERVAL seconds (only while a desired
 * plan exists: nothing wakes up for nothing); a drift is audited
 * ('detected') and counted once, and with enforcement the plan is set back (through the
 * plan-change service), at most once per interval. It never fights a hold (the hold's plan is
 * meant to differ) nor group policy (which would revert the change at its next refresh): those are
 * reported only. The counters are those of this service object (the process that runs the checker).
 */
import type { Config } from '../config.ts';
import type { DesiredFile, DesiredState } from '../domain/desired.ts';
import { errorMessage } from '../domain/errors.ts';
import type { ActivePlan, Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import type { Logger } from '../lib/log.ts';
import type { Schedule } from '../lib/schedule.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { auditPlan } from './change-intent.ts';
import {
  type Desired,
  type EnforcedDesired,
  type Evaluation,
  evaluate,
  loadDesired,
} from './desired-rules.ts';
import { HeldNow, notWhileHeld } from './hold-rules.ts';
import type { HoldsService } from './holds.ts';
import type { PlanChangeService } from './plan-change.ts';

export interface DesiredOptions {
  store: Store;
  backend: PowerBackend;
  log: Logger;
  config: Pick<Config, 'desiredPlan' | 'desiredEnforce' | 'desiredInterval'>;
  planChange: PlanChangeService;
  holds: HoldsService;
  /** The service's one timer (shared with the hold expiry). */
  schedule: Schedule;
}

const SCHEDULE_JOB = 'desired-state check';

export class DesiredService {
  /** Periodic checks completed. */
  checks = 0;
  lastCheck: string | null = null;
  lastDriftAt: string | null = null;
  /** Drifts detected: counted when a check finds drift after one that did not. */
  driftTotal = 0;
  correctedTotal = 0;
  /** Result of the last periodic check; null before the first or without a desired plan. */
  inDesiredState: boolean | null = null;
  /** The desired plan of the last check. */
  planId: string | null = null;
  private lastError: string | undefined;
  /** The current drift was already counted and audited. */
  private inDrift = false;
  private lastEnforceAt: number | undefined;
  private running = false;
  private unwatch: (() => void) | undefined;
  /** The check in progress, if any (stop waits for it). */
  private checking: Promise<void> | undefined;
  private again = false;
  private readonly o: DesiredOptions;

  constructor(o: DesiredOptions) {
    this.o = o;
  }

  get checkerRunning(): boolean {
    return this.running;
  }

  private load(): Promise<Desired | undefined> {
    return loadDesired(this.o.store, this.o.config);
  }

  private evaluate(desired: Desired, active: ActivePlan): Promise<Evaluation> {
    return evaluate(desired, active, {
      resolve: async (ref) => this.o.planChange.resolve(ref, await this.o.backend.listPlans()),
      held: async () => (await this.o.holds.live()).length > 0,
      lastCheck: this.lastCheck,
    });
  }

  /** get_active_power_plan's answer with the `desired` comparison added when a desired plan is set. */
  async withDesired(active: ActivePlan): Promise<ActivePlan> {
    const desired = await this.load();
    if (!desired) return active;
    return { ...active, desired: (await this.evaluate(desired, active)).summary };
  }

  /** Sets the desired plan back, unless a hold was taken meanwhile or the last try is too recent. */
  private async enforce(target: Plan): Promise<void> {
    const now = Date.now();
    // 90%: the timer's own jitter must not push a correction to the interval after next.
    if (this.lastEnforceAt !== undefined && now - this.lastEnforceAt < this.o.config.desiredInterval * 900)
      return;
    this.lastEnforceAt = now;
    const { planChange, log } = this.o;
    try {
      const r = await planChange.change({
        who: 'service',
        operation: 'enforce_desired_state',
        plan: target,
        input: { desired: target.id },
        lastError: this.lastError,
        policy: [notWhileHeld],
      });
      if (!r.changed) return;
      log.info('desired plan set back', { from: r.before?.id, to: target.id });
    } catch (e) {
      // Held on purpose meanwhile: not a failure, the next check sees the hold.
      if (e instanceof HeldNow) return;
      const error = errorMessage(e);
      if (error !== this.lastError) log.error('setting the desired plan back failed', { error });
      this.lastError = error;
      return;
    }
    this.correctedTotal++;
    this.inDrift = false;
    this.inDesiredState = true;
    this.lastError = undefined;
  }

  /** One periodic check: detect (audit + count once per drift), then correct when enforcing. */
  async check(): Promise<void> {
    const desired = await this.load();
    if (!desired) {
      Object.assign(this, {
        lastCheck: new Date().toISOString(),
        inDesiredState: null,
        planId: null,
        inDrift: false,
      });
      return;
    }
    // Read now: an answer reused from a read before the last check would show a change made since
    // at a later check, not this one.
    const active = await this.o.backend.getActive({ live: true });
    const { plan, summary } = await this.evaluate(desired, active);
    this.lastCheck = new Date().toISOString();
    this.inDesiredState = summary.inDesiredState;
    this.planId = summary.planId;
    if (summary.status === 'unknown-plan') {
      this.lastError = `The desired plan '${desired.planRef}' matches no plan here.`;
      return;
    }
    // In the desired state, or held on purpose: a drift seen after this is a new one.
    if (summary.status === 'in-desired-state' || summary.status === 'held') {
      this.inDrift = false;
      return;
    }
    if (!this.inDrift) {
      this.inDrift = true;
      this.driftTotal++;
      this.lastDriftAt = this.lastCheck;
      await this.o.planChange.audit('service', {
        operation: 'desired_state_check',
        input: { desired: summary.planId, enforce: desired.enforce, policyManaged: active.policyManaged },
        before: auditPlan(active.plan),
        after: auditPlan(plan),
        result: 'detected',
      });
      this.o.log.warn('power plan drift', {
        desired: summary.planId,
        active: active.plan?.id,
        status: summary.status,
      });
    }
    if (summary.status === 'drift' && desired.enforce && plan) await this.enforce(plan);
  }

  /** get_desired_state: the live comparison plus this process's counters. */
  async state(): Promise<DesiredState> {
    const desired = await this.load();
    const active = await this.o.backend.getActive();
    const ev = desired ? await this.evaluate(desired, active) : undefined;
    return {
      planId: ev?.summary.planId ?? null,
      planName: ev?.plan?.name ?? null,
      source: desired?.source ?? 'none',
      enforce: desired?.enforce ?? this.o.config.desiredEnforce,
      intervalSeconds: this.o.config.desiredInterval,
      activePlanId: active.plan?.id ?? null,
      inDesiredState: ev?.summary.inDesiredState ?? null,
      status: ev?.summary.status ?? 'none',
      checkerRunning: this.checkerRunning,
      lastCheck: this.lastCheck,
      lastDriftAt: this.lastDriftAt,
      driftTotal: this.driftTotal,
      correctedTotal: this.correctedTotal,
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  /** set_desired_power_plan: `null` (or `none`) means no desired plan, even when one is configured. */
  async set(
    caller: Caller,
    input: { plan: string | null; enforce?: boolean | undefined },
  ): Promise<DesiredState> {
    const { backend, store } = this.o;
    const clear = input.plan === null || input.plan.trim().toLowerCase() === 'none';
    const target =
      clear || input.plan === null ? null : this.o.planChange.resolve(input.plan, await backend.listPlans());
    const previous = await this.load();
    const file: DesiredFile = {
      planId: target?.id ?? null,
      planName: target?.name ?? null,
      ...(input.enforce !== undefined ? { enforce: input.enforce } : {}),
      setAt: new Date().toISOString(),
      setBy: caller.name,
    };
    await store.write('desired.json', file);
    await this.o.planChange.audit(caller, {
      operation: 'set_desired_power_plan',
      input: { ...input, enforce: file.enforce },
      before: previous ? { id: previous.planRef, name: previous.planRef } : null,
      after: auditPlan(target),
      result: 'changed',
    });
    this.inDrift = false;
    this.lastEnforceAt = undefined;
    this.lastError = undefined;
    void this.checkNow();
    return this.state();
  }

  /**
   * The enforced desired plan, when there is one that names a plan here: what set_power_plan's
   * change checks (`whileEnforced`), read before the change so that the change never calls back.
   */
  async enforced(): Promise<EnforcedDesired | undefined> {
    const desired = await this.load();
    if (!desired?.enforce) return undefined;
    const { plan } = await this.evaluate(desired, await this.o.backend.getActive());
    return plan
      ? {
          planId: plan.id,
          planName: plan.name,
          source: desired.source,
          intervalSeconds: this.o.config.desiredInterval,
        }
      : undefined;
  }

  /** Runs a check now, while the checker runs (after a change, so it is seen at once). */
  async checkNow(): Promise<void> {
    if (!this.running) return;
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = this.runCheck();
    await this.checking;
  }

  private async runCheck(): Promise<void> {
    const started = Date.now();
    let watching = true;
    try {
      await this.check();
      this.checks++;
      // Nothing to compare: no timer. A desired plan set later (here or by a CLI run) is seen
      // through the state directory's watcher, or at the interval when it cannot be watched.
      watching = this.planId !== null;
    } catch (e) {
      this.lastError = errorMessage(e);
      this.o.log.warn('desired state check failed', { error: this.lastError });
    } finally {
      this.checking = undefined;
      if (this.again) {
        this.again = false;
        void this.checkNow();
      } else if (this.running) {
        const seconds = this.o.config.desiredInterval;
        // On the interval's grid from this check's start (a slow check is not followed by a gap);
        // 5% slack: shares a wake-up with a hold's expiry that falls just before it.
        if (watching || !this.unwatch)
          this.o.schedule.set(
            SCHEDULE_JOB,
            started + seconds * 1000,
            () => void this.checkNow(),
            seconds * 50,
          );
        else this.o.schedule.clear(SCHEDULE_JOB);
      }
    }
  }

  /**
   * The checker of a running server: a check at once, then one per interval on the service's one
   * schedule while a desired plan exists; a change of `desired.json` (by any process) checks at once.
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.unwatch = this.o.store.watch(['desired.json'], () => void this.checkNow());
    void this.checkNow();
  }

  /** Stops the checker; resolves once a check in progress has finished. */
  async stop(): Promise<void> {
    this.running = false;
    this.unwatch?.();
    this.unwatch = undefined;
    this.o.schedule.clear(SCHEDULE_JOB);
    await this.checking;
  }
}
