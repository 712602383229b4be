/**
 * The backend for a system with no power backend of its own: it answers every read, exposes no
 * plans and says why nothing can be changed.
 */
import { PowerPlanError } from '../domain/errors.ts';
import { emptyProcessorSettings } from '../domain/schemas.ts';
import type { PowerBackend } from './backend.ts';

export const createUnsupportedBackend = (platform: string): PowerBackend => {
  const reason = `No power backend for the '${platform}' platform; set POWERPLAN_BACKEND=simulated to try the service.`;
  return {
    name: 'unsupported',
    capabilities: async () => ({
      listPlans: false,
      setPlan: false,
      createPlan: false,
      processorSettings: false,
    }),
    listPlans: async () => [],
    getActive: async () => ({
      plan: null,
      processor: emptyProcessorSettings(),
      owner: 'none',
      policyManaged: false,
      canSet: false,
      cannotSetReason: reason,
    }),
    setActive: async () => {
      throw new PowerPlanError('unsupported', reason);
    },
    facts: async () => ({ virtualization: { detected: false, kind: null }, powerSource: 'unknown' }),
  };
};
