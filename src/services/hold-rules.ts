/**
 * The rules of holds as preconditions of a plan change: what a set, an enforcement and a new hold
 * may do while holds are in force (a set is refused or, forced, ends them; enforcement never sets
 * a held plan back; overlapping holds name the same plan; at most POWERPLAN_MAX_HOLDS at once).
 */
import { PowerPlanError } from '../domain/errors.ts';
import { byLiveness, describeHolds, type HoldRecord, holdDetails } from '../domain/holds.ts';
import type { Precondition } from './change-intent.ts';
import type { RestoreJournal } from './restore-journal.ts';

/** The holds in force in a journal. */
export const liveIn = (j: RestoreJournal | undefined, now = Date.now()): HoldRecord[] =>
  j?.kind === 'holds' ? byLiveness(j.holds, now).alive : [];

/**
 * set_power_plan's rule about holds: without `force` a change while holds are in force is refused
 * (409); asking for the plan already in force is harmless and only warned about. With `force` the
 * holds end once the set has succeeded (a failed set keeps them) and the plan set stays: nothing
 * is restored.
 */
export const setWhileHeld: Precondition = (c) => {
  const held = liveIn(c.owed);
  if (held.length === 0) return;
  if (!c.intent.force) {
    if (!c.switches) {
      c.warnings.push(`The plan is held: ${describeHolds(held)}.`);
      return;
    }
    throw new PowerPlanError(
      'conflict',
      `The plan is held: ${describeHolds(held)}. Release the holds (release_power_plan), or repeat with ` +
        'force: true (CLI: --force) to end them; the plan you set then stays and nothing is restored.',
      holdDetails(held, Date.now()),
    );
  }
  const ending = `${held.length === 1 ? 'hold' : 'holds'} ${held.map((h) => h.id).join(', ')}`;
  if (c.intent.dryRun) {
    c.warnings.push(`Would end ${ending}; nothing would be restored.`);
    return;
  }
  c.warnings.push(`Ended ${ending}; nothing will be restored.`);
  c.clearJournal = true;
  for (const h of held) {
    c.followUps.push({
      operation: 'release_power_plan',
      input: { id: h.id, planId: h.planId, forcedBy: 'set_power_plan' },
      before: null,
      after: null,
      result: 'changed',
    });
  }
};

/** Enforcement's rule: a plan held on purpose is never set back. */
export class HeldNow extends PowerPlanError {
  constructor(held: readonly HoldRecord[]) {
    super('conflict', `The plan is held: ${describeHolds(held)}.`);
  }
}
export const notWhileHeld: Precondition = (c) => {
  const held = liveIn(c.owed);
  if (held.length) throw new HeldNow(held);
};

/** A hold's rule: overlapping holds name the same plan. */
export const sameHeldPlan: Precondition = (c) => {
  const held = c.owed?.holds ?? [];
  if (held.length && held[0]!.planId !== c.target.id) {
    const until = held
      .map((h) => h.expiresAt)
      .sort()
      .at(-1);
    throw new PowerPlanError(
      'conflict',
      `${held[0]!.planName} (${held[0]!.planId}) is held until ${until} by ${describeHolds(held)}. ` +
        'Hold the same plan, or release those holds first (release_power_plan).',
      holdDetails(held, Date.now()),
    );
  }
};

/**
 * A hold's rule: at most `max` holds in force at once (POWERPLAN_MAX_HOLDS). 409 like the other
 * refusals of a hold: what refuses it is the holds in force, which a release or an expiry changes,
 * not the pace of the requests (429 would tell a client to retry after a while, and nothing
 * changes by waiting unless a hold ends).
 */
export const withinCap =
  (max: number): Precondition =>
  (c) => {
    const held = liveIn(c.owed);
    if (held.length < max) return;
    const next = held
      .map((h) => h.expiresAt)
      .sort()
      .at(0);
    throw new PowerPlanError(
      'conflict',
      `${held.length} holds are in force, the most this service keeps (POWERPLAN_MAX_HOLDS=${max}). ` +
        `Hold again once one has ended (the next ends at ${next}), or release one (release_power_plan).`,
      { maxHolds: max, holdsInForce: held.length, nextExpiry: next },
    );
  };
