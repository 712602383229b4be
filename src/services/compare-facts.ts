/**
 * Gathers what the advice rules need from the backend (plans, the active plan with its settings
 * and owner, system facts, capabilities) and the environment fingerprint a benchmark records, so
 * that the rules themselves stay pure.
 */

import type { SystemFacts } from '../advice/input.ts';
import type { Fingerprint } from '../bench/service.ts';
import type { ActivePlan, Plan } from '../domain/schemas.ts';
import type { PowerBackend } from '../platform/backend.ts';

export interface AdviceFacts {
  plans: Plan[];
  active: ActivePlan;
  system: SystemFacts;
}

export const gatherFacts = async (backend: PowerBackend): Promise<AdviceFacts> => {
  const [plans, active, facts, capabilities] = await Promise.all([
    backend.listPlans(),
    backend.getActive(),
    backend.facts(),
    backend.capabilities(),
  ]);
  return {
    plans,
    active,
    system: {
      backend: backend.name,
      virtualization: facts.virtualization,
      powerSource: facts.powerSource,
      capabilities,
      templates: capabilities.createPlan ? (backend.templates?.() ?? []) : [],
    },
  };
};

/** What a benchmark records about the platform it ran on (read after its busy guard passed). */
export const benchFingerprint = (backend: PowerBackend) => async (): Promise<Fingerprint> => {
  const [active, facts] = await Promise.all([
    backend.getActive().catch(() => null),
    backend.facts().catch(() => null),
  ]);
  return { activePlan: active, backend: backend.name, virtualization: facts?.virtualization ?? null };
};
