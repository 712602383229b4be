/**
 * Turns what a caller typed (a plan id, a kind alias, a powercfg alias or an exact name) into one
 * plan of the backend's list. Ids and aliases win over names; names compare case-insensitively
 * and are never used to classify, only to look up.
 */
import { PowerPlanError } from '../domain/errors.ts';
import { type Plan, type PlanKind, planKinds } from '../domain/schemas.ts';

const GUID = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i;

const describe = (plans: readonly Plan[]) => plans.map((p) => `${p.id} (${p.name})`).join(', ');

export const isKind = (s: string): s is PlanKind => (planKinds as readonly string[]).includes(s);

/** The plan a kind alias stands for: a built-in plan of that kind first, then the first listed. */
export const planForKind = (plans: readonly Plan[], kind: PlanKind): Plan | undefined => {
  const ofKind = plans.filter((p) => p.kind === kind);
  return ofKind.find((p) => p.builtin) ?? ofKind[0];
};

export const resolvePlan = (
  input: string,
  plans: readonly Plan[],
  aliases: Readonly<Record<string, string>> = {},
): Plan => {
  const text = input.trim();
  const guid = GUID.exec(text)?.[1]?.toLowerCase();
  const byId = plans.find((p) => p.id === (guid ?? text));
  if (byId) return byId;

  const aliasKey = Object.keys(aliases).find((k) => k.toLowerCase() === text.toLowerCase());
  if (aliasKey) {
    const target = plans.find((p) => p.id === aliases[aliasKey]);
    if (target) return target;
  }

  const lower = text.toLowerCase();
  if (isKind(lower) && lower !== 'custom') {
    const byKind = planForKind(plans, lower);
    if (byKind) return byKind;
  }

  const byName = plans.filter((p) => p.name.toLowerCase() === lower);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new PowerPlanError(
      'conflict',
      `More than one plan is named '${input}': ${describe(byName)}. Use the plan id instead.`,
      { matches: byName.map((p) => p.id) },
    );
  }

  const available = plans.length ? describe(plans) : 'none';
  throw new PowerPlanError('not_found', `Plan '${input}' not found; available: ${available}.`, {
    available: plans.map((p) => ({ id: p.id, name: p.name, kind: p.kind })),
  });
};
