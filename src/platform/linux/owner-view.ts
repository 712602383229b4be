/**
 * What each Linux owner (tuned, power-profiles-daemon, plain sysfs, or nobody) answers: its plans,
 * which one is in force, whether it can be changed, and how to change it through that owner.
 */
import { PowerPlanError } from '../../domain/errors.ts';
import type { Note } from '../../domain/notes.ts';
import type { Owner, Plan } from '../../domain/schemas.ts';
import { byPreference, type Kinded } from './kinds.ts';

export interface OwnerView {
  owner: Owner;
  /** In preference order within a kind, the one in force marked `active`. */
  plans: Plan[];
  canSet: boolean;
  cannotSetReason?: string;
  notes: Note[];
  /** Makes a plan active through the owner and reads it back. */
  set(planId: string): Promise<void>;
}

/** A daemon's probe: null when its tool is not installed, a note when installed but not in charge. */
export type Probe = { view: OwnerView } | { note: Note } | null;

export type Candidate = Kinded & { id: string; name: string; description?: string };

const toPlan = (c: Candidate, active: boolean): Plan => ({
  id: c.id,
  name: c.name,
  kind: c.kind,
  kindSource: c.kindSource,
  active,
  builtin: c.builtin,
  ...(c.description ? { description: c.description } : {}),
});

/**
 * The owner's plans in preference order with the active one marked. A state in force that is none
 * of them (a custom tuned merge, a raw EPP number, CPUs that disagree) is listed too, as its own
 * plan, so the answer never pretends that a listed plan is in force.
 */
export const planList = (
  candidates: readonly Candidate[],
  activeId: string | null,
  unlisted?: Candidate,
): Plan[] => {
  const plans = byPreference(candidates).map((c) => toPlan(c, c.id === activeId));
  if (activeId !== null && unlisted && !plans.some((p) => p.active)) plans.push(toPlan(unlisted, true));
  return plans;
};

/** The error for a plan id that the owner cannot make active. */
export const notSettable = (planId: string, candidates: readonly Candidate[]): PowerPlanError =>
  new PowerPlanError(
    'not_found',
    `Plan '${planId}' is not one this system can switch to; available: ${candidates.map((c) => c.id).join(', ') || 'none'}.`,
    { available: candidates.map((c) => c.id) },
  );
