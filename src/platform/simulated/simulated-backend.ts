/**
 * A simulated stock Windows Server: Balanced (active), High performance and Power saver with their
 * usual default processor settings, and Ultimate Performance creatable from its hidden template.
 * Its state lives in the state directory, so a change survives a restart and is shared by the CLI
 * and a running server. Tests can seed the state file to simulate group policy or a VM. The state
 * and what is derived from it alone are in simulated-state.ts.
 */
import { PowerPlanError } from '../../domain/errors.ts';
import type { Effective, Mismatch } from '../../domain/idle.ts';
import type { ActivePlan, Capabilities } from '../../domain/schemas.ts';
import { freezeDeep, onceEach } from '../../lib/frozen.ts';
import type { Store } from '../../lib/store.ts';
import type { BackendFacts, CreatableKind, PowerBackend } from '../backend.ts';
import { CREATED_SCHEME, planTemplates, powercfgAliases, SCHEME } from '../windows/well-known.ts';
import {
  activeOf,
  answerName,
  both,
  CHECKED,
  defaultSimulatedState,
  inForce,
  type SimPlan,
  SimState,
  toPlan,
} from './simulated-state.ts';

export interface SimulatedBackendOptions {
  store: Store;
}

export const createSimulatedBackend = ({ store }: SimulatedBackendOptions): PowerBackend => {
  // The state file is the truth, looked at on every call (Store.readShared: one lstat while it is
  // unchanged); what is derived from one state is derived once (`answerOf`).
  const initial = freezeDeep(defaultSimulatedState());
  const load = async (): Promise<SimState> =>
    (await store.readShared('simulated-backend.json', SimState)) ?? initial;
  const answerOf = onceEach(activeOf);
  const save = (state: SimState) => store.write('simulated-backend.json', state);

  const capabilities = async (): Promise<Capabilities> => ({
    listPlans: true,
    setPlan: true,
    createPlan: true,
    processorSettings: true,
  });

  return {
    name: 'simulated',
    capabilities,
    async listPlans() {
      const state = await load();
      return state.plans.map((p) => toPlan(state, p));
    },
    async getActive(): Promise<ActivePlan> {
      const state = await load();
      return answerOf(state);
    },
    async checkEffective(planId): Promise<Effective> {
      const state = await load();
      const plan = state.plans.find((p) => p.id === planId);
      if (!plan) return { checked: false, matches: true, settings: [], mismatches: [] };
      const now = inForce(state, plan);
      const mismatches: Mismatch[] = [];
      const settings: string[] = [];
      for (const k of CHECKED) {
        for (const power of ['ac', 'dc'] as const) {
          const setting = `${answerName[k]}.${power}`;
          settings.push(setting);
          if (plan[k][power] === now[k][power]) continue;
          const pinned = state.faults.policySettings[answerName[k]] ?? state.faults.policySettings[k];
          mismatches.push({
            setting,
            wanted: plan[k][power],
            got: now[k][power],
            cause: pinned
              ? "group policy pins this setting; the plan's value never applies. Change the policy instead."
              : 'the setting did not stick: the system reports another value for the active plan.',
          });
        }
      }
      for (const o of state.faults.ignoredOptions) {
        settings.push(o.option);
        mismatches.push({
          setting: o.option,
          wanted: o.wanted,
          got: null,
          cause: `the option '${o.option}' is ignored (unknown to the system, probably misspelled), so it was never applied.`,
        });
      }
      return { checked: true, matches: mismatches.length === 0, settings, mismatches };
    },
    async setActive(planId) {
      const state = await load();
      if (!state.elevated) {
        throw new PowerPlanError(
          'forbidden',
          'Changing the power plan requires administrator rights: run the service elevated.',
        );
      }
      if (!state.plans.some((p) => p.id === planId)) {
        throw new PowerPlanError('not_found', `Power scheme ${planId} does not exist.`);
      }
      await save({ ...state, activeId: planId });
    },
    async createPlan(kind: CreatableKind) {
      const state = await load();
      const template =
        kind === 'ultimate-performance'
          ? {
              ...state.plans.find((p) => p.id === SCHEME.highPerformance)!,
              name: 'Ultimate Performance',
              coreParkingMinCores: both(100),
            }
          : { ...state.plans.find((p) => p.kind === 'high-performance')!, name: 'High performance' };
      const created: SimPlan = { ...template, id: CREATED_SCHEME[kind], kind, builtin: false };
      await save({ ...state, plans: [...state.plans, created] });
      return toPlan(state, created);
    },
    async facts(): Promise<BackendFacts> {
      const state = await load();
      return { virtualization: state.virtualization, powerSource: 'ac' };
    },
    aliases: () => ({ ...powercfgAliases }),
    templates: planTemplates,
  };
};
