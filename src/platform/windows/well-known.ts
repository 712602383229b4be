/**
 * Windows facts that never change: the well-known scheme GUIDs, powercfg's aliases for them and
 * the processor setting GUIDs. Shared by the Windows backend, the simulated stock Windows Server
 * and the advice rules. Plans are always identified by these GUIDs, never by their localized names.
 */
import type { PlanKind, PlanTemplate } from '../../domain/schemas.ts';

export const SCHEME = {
  balanced: '381b4222-f694-41f0-9685-ff5bb260df2e',
  highPerformance: '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c',
  powerSaver: 'a1841308-3541-4fab-bc81-f71556f20b4a',
  /** Hidden template; `powercfg /duplicatescheme` makes an installable copy. */
  ultimateTemplate: 'e9a42b02-d5df-448d-aa00-03f14749eb61',
  /** High performance plan as deployed by Configuration Manager. */
  configMgrHighPerformance: 'db310065-829b-4671-9647-2261c00e86ef',
} as const;

/**
 * The GUIDs this service gives the plans it creates (`powercfg /duplicatescheme <template> <GUID>`),
 * so that a created Ultimate Performance plan is still recognised as such after a restart, when its
 * settings alone would make it look like High performance.
 */
export const CREATED_SCHEME = {
  'ultimate-performance': '3632ef55-cb5a-4976-9299-8943d20a5e5d',
  'high-performance': 'a0bb6da1-47f3-48aa-b79c-613c77f22e48',
} as const;

/** The plans a missing well-known plan is created from (`powercfg /duplicatescheme <id>`), with its usual name. */
export const TEMPLATES = {
  'ultimate-performance': { id: SCHEME.ultimateTemplate, name: 'Ultimate Performance' },
  'high-performance': { id: SCHEME.highPerformance, name: 'High performance' },
} as const satisfies Record<keyof typeof CREATED_SCHEME, { id: string; name: string }>;

/** The templates as a backend announces them. */
export const planTemplates = (): PlanTemplate[] =>
  Object.entries(TEMPLATES).map(([kind, t]) => ({ ...t, kind: kind as PlanKind }));

/** Kind of each well-known scheme GUID. */
export const wellKnownKinds: Readonly<Record<string, PlanKind>> = {
  [SCHEME.balanced]: 'balanced',
  [SCHEME.highPerformance]: 'high-performance',
  [SCHEME.powerSaver]: 'power-saver',
  [SCHEME.ultimateTemplate]: 'ultimate-performance',
  [SCHEME.configMgrHighPerformance]: 'high-performance',
};

/** powercfg's own aliases (note SCHEME_MIN = minimum power saving = High performance). */
export const powercfgAliases: Readonly<Record<string, string>> = {
  SCHEME_BALANCED: SCHEME.balanced,
  SCHEME_MIN: SCHEME.highPerformance,
  SCHEME_MAX: SCHEME.powerSaver,
};

export const SUB_PROCESSOR = '54533251-82be-4824-96c1-47b60b740d00';

export const SETTING = {
  minState: '893dee8e-2bef-41e0-89c6-b55d0929964c',
  maxState: 'bc5038f7-23e0-4960-96da-33abaf5935ec',
  boostMode: 'be337238-0d82-4146-a960-4f3749d470c7',
  epp: '36687f9e-e3a5-4dbf-b1dc-15eb381c6863',
  coreParkingMinCores: '0cc5b647-c1df-4637-891a-dec35c318583',
  perfIncreaseThreshold: '06cadf0e-64ed-448a-8927-ce7bf90eb35d',
  perfIncreaseTime: '984cf492-3bed-4488-a8f9-4286c97bf5aa',
  personality: '245d8541-3943-4422-b025-13a784f679b7',
  idleDisable: '5d76a2ca-e8c0-402f-a133-2158492d58ad',
  idleStateMax: '9943e905-9a30-4ec1-9b99-44dd3b76f7a2',
  idlePromote: '7b224883-b3cc-4d79-819f-8374152cbe7c',
  idleDemote: '4b92d758-5a24-4851-a470-815d78aee119',
} as const;

/**
 * The key settings of the built-in plans as Windows ships them (AC values): a built-in plan whose
 * settings differ is reported as edited, since its GUID no longer says what it does.
 */
export const STOCK_SETTINGS: Readonly<
  Record<string, { minStatePercent: number; maxStatePercent: number; idleDisable: number }>
> = {
  [SCHEME.balanced]: { minStatePercent: 5, maxStatePercent: 100, idleDisable: 0 },
  [SCHEME.highPerformance]: { minStatePercent: 100, maxStatePercent: 100, idleDisable: 0 },
  [SCHEME.powerSaver]: { minStatePercent: 5, maxStatePercent: 100, idleDisable: 0 },
  [SCHEME.configMgrHighPerformance]: { minStatePercent: 100, maxStatePercent: 100, idleDisable: 0 },
};

/** The differences of a built-in plan from its stock key settings (empty: not edited, or not a built-in). */
export const stockDifferences = (
  id: string,
  ac: { minStatePercent: number | null; maxStatePercent: number | null; idleDisable: number | null },
): { setting: string; stock: number; value: number }[] => {
  const stock = STOCK_SETTINGS[id];
  if (!stock) return [];
  return (Object.keys(stock) as (keyof typeof stock)[]).flatMap((k) => {
    const value = ac[k];
    return value !== null && value !== stock[k] ? [{ setting: `${k}.ac`, stock: stock[k], value }] : [];
  });
};

/** Scheme personality values: how Windows itself classifies a custom or duplicated plan. */
export const personalityKinds: Readonly<Record<number, PlanKind>> = {
  0: 'power-saver',
  1: 'high-performance',
  2: 'balanced',
};

/** Settings that belong to no subgroup (the scheme personality lives here). */
export const SUB_NONE = 'fea3413e-7e05-4911-9a71-700331f1c294';
