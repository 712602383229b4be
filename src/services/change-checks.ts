/**
 * The rules every plan change passes: the preconditions before the switch (a refusal is a thrown
 * PowerPlanError, and nothing has changed then) and the verifications after it (a throw fails the
 * change: the plan-change service rolls the journal back and audits the failure).
 */
import type { AuditOperation } from '../domain/audit.ts';
import { PowerPlanError } from '../domain/errors.ts';
import { byLiveness, describeHolds } from '../domain/holds.ts';
import type { Precondition, Verification } from './change-intent.ts';
import type { RestoreJournal } from './restore-journal.ts';

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
    return `The plan is held (${describeHolds(alive)}); a comparison would switch it. Release the holds first (release_power_plan).`;
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
