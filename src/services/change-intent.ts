/**
 * What a plan change is made of, as the plan-change service and the services that ask for one see
 * it: the intent (who, which operation, the plan, the caller's policy and the restore it owes), the
 * change as the preconditions shape it, the switched change the verifications read back, and the
 * outcome. Types only, and the audit trail's name of a plan.
 */
import type { AuditOperation } from '../domain/audit.ts';
import type { Effective } from '../domain/idle.ts';
import type { ActivePlan, Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import type { PowerBackend } from '../platform/backend.ts';
import type { AuditEntry } from './pending-change.ts';
import type { RestoreJournal } from './restore-journal.ts';

export type { AuditEntry } from './pending-change.ts';

/** Who acts: a caller, or the service on its own (restore, expiry, enforcement, recovery). */
export type Who = Caller | 'service';

/** A plan named by id (and name, for the audit trail and messages). */
export type PlanTarget = Plan | { id: string; name: string };

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
