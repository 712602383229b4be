/**
 * A simulated stock Windows Server: Balanced (active), High performance and Power saver with their
 * usual default processor settings, and Ultimate Performance creatable from its hidden template.
 * Its state lives in the state directory, so a change survives a restart and is shared by the CLI
 * and a running server. Tests can seed the state file to simulate group policy or a VM.
 */
import { z } from 'zod';
import { PowerPlanError } from '../../domain/errors.ts';
import {
  type Control,
  type Effective,
  type IdleStates,
  type Mismatch,
  windowsIdleStates,
} from '../../domain/idle.ts';
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
import { freezeDeep } from '../../lib/frozen.ts';
import type { Store } from '../../lib/store.ts';
import type { BackendFacts, CreatableKind, PowerBackend } from '../backend.ts';
import {
  CREATED_SCHEME,
  planTemplates,
  powercfgAliases,
  SCHEME,
  STOCK_SETTINGS,
  stockDifferences,
} from '../windows/well-known.ts';

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
  idleDisable: Ac.default({ ac: 0, dc: 0 }),
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
  /**
   * Faults, so a test can see a change that did not take effect: settings the system keeps at
   * another value whatever the plan says, settings pinned by group policy, and options the plan
   * sets that the system ignores (like a misspelled tuned option).
   */
  faults: z
    .object({
      nonSticky: z.record(z.string(), Ac).default({}),
      policySettings: z.record(z.string(), Ac).default({}),
      ignoredOptions: z.array(z.object({ option: z.string(), wanted: z.string() })).default([]),
    })
    .default({ nonSticky: {}, policySettings: {}, ignoredOptions: [] }),
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
  idleDisable: both(0),
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
    idleDisable: both(0),
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
    idleDisable: both(0),
  },
];

export const defaultSimulatedState = (): SimState => ({
  activeId: SCHEME.balanced,
  plans: stockPlans(),
  policyManaged: false,
  elevated: true,
  virtualization: { detected: false, kind: null },
  faults: { nonSticky: {}, policySettings: {}, ignoredOptions: [] },
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

/** The settings a switch is checked on, by their answer names. */
const CHECKED = ['minState', 'maxState', 'boostMode', 'epp', 'idleDisable'] as const;
const answerName: Record<(typeof CHECKED)[number], string> = {
  minState: 'minStatePercent',
  maxState: 'maxStatePercent',
  boostMode: 'boostMode',
  epp: 'epp',
  idleDisable: 'idleDisable',
};

/** The plan as in force: settings that do not stick and policy-pinned settings win over the plan. */
const inForce = (state: SimState, p: SimPlan): SimPlan => {
  const over = { ...state.faults.nonSticky, ...state.faults.policySettings };
  const out = { ...p };
  for (const k of CHECKED) {
    const v = over[answerName[k]] ?? over[k];
    if (v) out[k] = v;
  }
  return out;
};

const simulatedIdle = (p: SimPlan): IdleStates =>
  windowsIdleStates('simulated', {
    idleDisable: acdc(p.idleDisable),
    idleStateMaximum: null,
    promoteThreshold: null,
    demoteThreshold: null,
  });

const simulatedControl = (state: SimState): Control =>
  state.virtualization.detected
    ? {
        decidedBy: 'hypervisor',
        clockControl: false,
        idleControl: false,
        evidence: [
          {
            source: 'simulation',
            value: state.virtualization.kind,
            text: 'simulated virtual machine: one idle state and no performance control, so the host decides',
          },
        ],
      }
    : {
        decidedBy: 'os',
        clockControl: true,
        idleControl: true,
        evidence: [
          {
            source: 'simulation',
            value: 'os',
            text: 'simulated server: the OS controls clock and idle states',
          },
        ],
      };

export interface SimulatedBackendOptions {
  store: Store;
}

export const createSimulatedBackend = ({ store }: SimulatedBackendOptions): PowerBackend => {
  // The state file is the truth, looked at on every call (Store.readShared: one lstat while it is
  // unchanged); what is derived from one state is derived once (`answers`).
  const initial = freezeDeep(defaultSimulatedState());
  const load = async (): Promise<SimState> =>
    (await store.readShared('simulated-backend.json', SimState)) ?? initial;
  const answers = new WeakMap<SimState, ActivePlan>();
  const save = (state: SimState) => store.write('simulated-backend.json', state);

  const toPlan = (state: SimState, p: SimPlan): Plan => {
    const differences = p.builtin
      ? stockDifferences(p.id, {
          minStatePercent: p.minState.ac,
          maxStatePercent: p.maxState.ac,
          idleDisable: p.idleDisable.ac,
        })
      : [];
    return {
      id: p.id,
      name: p.name,
      kind: p.kind,
      kindSource:
        p.builtin || (Object.values(CREATED_SCHEME) as string[]).includes(p.id)
          ? 'well-known-id'
          : 'personality',
      active: p.id === state.activeId,
      builtin: p.builtin,
      ...(p.builtin && STOCK_SETTINGS[p.id] ? { edited: differences.length > 0 } : {}),
      ...(differences.length ? { differences } : {}),
    };
  };

  /** The answer of getActive for one state. */
  const activeOf = (state: SimState): ActivePlan => {
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
      processor: settingsOf(inForce(state, active)),
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
      idle: simulatedIdle(inForce(state, active)),
      control: simulatedControl(state),
    };
  };

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
      let answer = answers.get(state);
      if (!answer) {
        answer = freezeDeep(activeOf(state));
        answers.set(state, answer);
      }
      return answer;
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
