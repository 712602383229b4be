/**
 * A simulated stock Windows Server: Balanced (active), High performance and Power saver with their
 * usual default processor settings, and Ultimate Performance creatable from its hidden template.
 * Its state lives in the state directory, so a change survives a restart and is shared by the CLI
 * and a running server. Tests can seed the state file to simulate group policy or a VM.
 */
import { z } from 'zod';
import { PowerPlanError } from '../../domain/errors.ts';
import { type Note, noteFields } from '../../domain/notes.ts';
import {
  type AcDc,
  type ActivePlan,
  type Capabilities,
  emptyProcessorSettings,
  type Plan,
  PlanKind,
  type ProcessorSettings,
  Virtualization,
} from '../../domain/schemas.ts';
import type { Store } from '../../lib/store.ts';
import type { BackendFacts, CreatableKind, PowerBackend } from '../backend.ts';
import { CREATED_SCHEME, planTemplates, powercfgAliases, SCHEME } from '../windows/well-known.ts';

const Ac = z.object({ ac: z.number(), dc: z.number() });

const SimPlan = z.object({
  id: z.string(),
  name: z.string(),
  kind: PlanKind,
  builtin: z.boolean(),
  minState: Ac,
  maxState: Ac,
  boostMode: Ac,
  epp: Ac,
  coreParkingMinCores: Ac,
  perfIncreaseThreshold: Ac,
  perfIncreaseTime: Ac,
});
type SimPlan = z.infer<typeof SimPlan>;

const SimState = z.object({
  activeId: z.string(),
  plans: z.array(SimPlan),
  /** Simulates a plan pinned by group policy: reads work, a set is reverted by the next refresh. */
  policyManaged: z.boolean().default(false),
  /** Simulates a caller without administrator rights. */
  elevated: z.boolean().default(true),
  virtualization: Virtualization.default({ detected: false, kind: null }),
});
type SimState = z.infer<typeof SimState>;

const both = (v: number) => ({ ac: v, dc: v });

const balanced: SimPlan = {
  id: SCHEME.balanced,
  name: 'Balanced',
  kind: 'balanced',
  builtin: true,
  minState: both(5),
  maxState: both(100),
  boostMode: both(1),
  epp: both(50),
  coreParkingMinCores: { ac: 10, dc: 10 },
  perfIncreaseThreshold: { ac: 60, dc: 80 },
  perfIncreaseTime: both(3),
};

const stockPlans = (): SimPlan[] => [
  balanced,
  {
    id: SCHEME.highPerformance,
    name: 'High performance',
    kind: 'high-performance',
    builtin: true,
    minState: both(100),
    maxState: both(100),
    boostMode: both(1),
    epp: both(0),
    coreParkingMinCores: both(100),
    perfIncreaseThreshold: both(30),
    perfIncreaseTime: both(1),
  },
  {
    id: SCHEME.powerSaver,
    name: 'Power saver',
    kind: 'power-saver',
    builtin: true,
    minState: both(5),
    maxState: { ac: 100, dc: 70 },
    boostMode: both(0),
    epp: both(100),
    coreParkingMinCores: both(10),
    perfIncreaseThreshold: both(90),
    perfIncreaseTime: both(3),
  },
];

export const defaultSimulatedState = (): SimState => ({
  activeId: SCHEME.balanced,
  plans: stockPlans(),
  policyManaged: false,
  elevated: true,
  virtualization: { detected: false, kind: null },
});

const acdc = (v: { ac: number; dc: number }): AcDc => ({ ac: v.ac, dc: v.dc });

const settingsOf = (p: SimPlan): ProcessorSettings => ({
  ...emptyProcessorSettings(),
  minStatePercent: acdc(p.minState),
  maxStatePercent: acdc(p.maxState),
  boostMode: acdc(p.boostMode),
  epp: acdc(p.epp),
  coreParkingMinCores: acdc(p.coreParkingMinCores),
  perfIncreaseThreshold: acdc(p.perfIncreaseThreshold),
  perfIncreaseTime: acdc(p.perfIncreaseTime),
});

export interface SimulatedBackendOptions {
  store: Store;
}

export const createSimulatedBackend = ({ store }: SimulatedBackendOptions): PowerBackend => {
  const load = async (): Promise<SimState> =>
    (await store.read('simulated-backend.json', SimState)) ?? defaultSimulatedState();
  const save = (state: SimState) => store.write('simulated-backend.json', state);

  const toPlan = (state: SimState, p: SimPlan): Plan => ({
    id: p.id,
    name: p.name,
    kind: p.kind,
    kindSource:
      p.builtin || (Object.values(CREATED_SCHEME) as string[]).includes(p.id)
        ? 'well-known-id'
        : 'personality',
    active: p.id === state.activeId,
    builtin: p.builtin,
  });

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
      const active = state.plans.find((p) => p.id === state.activeId) ?? state.plans[0]!;
      const notes: Note[] = state.policyManaged
        ? [
            {
              code: 'policy-managed',
              text: 'The active plan is set by group policy; a change here is reverted at the next policy refresh.',
            },
          ]
        : [];
      return {
        plan: toPlan(state, active),
        processor: settingsOf(active),
        owner: state.policyManaged ? 'group-policy' : 'simulated',
        policyManaged: state.policyManaged,
        canSet: state.elevated,
        ...(state.elevated
          ? {}
          : {
              cannotSetReason:
                'Changing the power plan requires administrator rights: run the service elevated.',
            }),
        ...noteFields(notes),
      };
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
