/**
 * The simulated server's state (the schema of its state file, the stock plans) and what is derived
 * from one state alone: a plan as the API shows it, the settings in force, idle states, control
 * and the answer of getActive. Pure functions of the state; the backend reads and writes it.
 */
import { z } from 'zod';
import { type Control, type IdleStates, windowsIdleStates } from '../../domain/idle.ts';
import { type Note, noteFields } from '../../domain/notes.ts';
import {
  type AcDc,
  type ActivePlan,
  emptyProcessorSettings,
  type Plan,
  PlanKind,
  type ProcessorSettings,
  Virtualization,
} from '../../domain/schemas.ts';
import { CREATED_SCHEME, SCHEME, STOCK_SETTINGS, stockDifferences } from '../windows/well-known.ts';

const Ac = z.object({ ac: z.number(), dc: z.number() });

export const SimPlan = z.object({
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
export type SimPlan = z.infer<typeof SimPlan>;

export const SimState = z.object({
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
export type SimState = z.infer<typeof SimState>;

export const both = (v: number) => ({ ac: v, dc: v });

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
export const CHECKED = ['minState', 'maxState', 'boostMode', 'epp', 'idleDisable'] as const;
export const answerName: Record<(typeof CHECKED)[number], string> = {
  minState: 'minStatePercent',
  maxState: 'maxStatePercent',
  boostMode: 'boostMode',
  epp: 'epp',
  idleDisable: 'idleDisable',
};

/** The plan as in force: settings that do not stick and policy-pinned settings win over the plan. */
export const inForce = (state: SimState, p: SimPlan): SimPlan => {
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

/** A simulated plan as the API shows it. */
export const toPlan = (state: SimState, p: SimPlan): Plan => {
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
export const activeOf = (state: SimState): ActivePlan => {
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
          cannotSetReason: 'Changing the power plan requires administrator rights: run the service elevated.',
        }),
    ...noteFields(notes),
    idle: simulatedIdle(inForce(state, active)),
    control: simulatedControl(state),
  };
};
