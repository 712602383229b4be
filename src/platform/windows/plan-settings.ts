/**
 * The processor and idle settings of a scheme as the answers name them (from `powercfg /qh`), and
 * the read-back after a switch: what the scheme asks for against what the power manager reports in
 * force, with single settings that group policy pins.
 */
import { type Effective, type IdleStates, type Mismatch, windowsIdleStates } from '../../domain/idle.ts';
import { type AcDc, emptyProcessorSettings, type ProcessorSettings } from '../../domain/schemas.ts';
import type { QueryResult } from './parse.ts';
import { POLICY_KEY, type Registry } from './registry.ts';
import { SETTING } from './well-known.ts';

export const acdc = (q: QueryResult, id: string): AcDc | null => {
  const s = q.settings.find((x) => x.id === id);
  return s ? { ac: s.ac, dc: s.dc } : null;
};

export const processorSettings = (q: QueryResult): ProcessorSettings => ({
  ...emptyProcessorSettings(),
  minStatePercent: acdc(q, SETTING.minState),
  maxStatePercent: acdc(q, SETTING.maxState),
  boostMode: acdc(q, SETTING.boostMode),
  epp: acdc(q, SETTING.epp),
  coreParkingMinCores: acdc(q, SETTING.coreParkingMinCores),
  perfIncreaseThreshold: acdc(q, SETTING.perfIncreaseThreshold),
  perfIncreaseTime: acdc(q, SETTING.perfIncreaseTime),
});

export const idleStates = (q: QueryResult): IdleStates =>
  windowsIdleStates('powercfg', {
    idleDisable: acdc(q, SETTING.idleDisable),
    idleStateMaximum: acdc(q, SETTING.idleStateMax),
    promoteThreshold: acdc(q, SETTING.idlePromote),
    demoteThreshold: acdc(q, SETTING.idleDemote),
  });

/** The settings checked after a switch, as the answer names them, with their GUIDs. */
const CHECKED: [string, string][] = [
  ['minStatePercent', SETTING.minState],
  ['maxStatePercent', SETTING.maxState],
  ['boostMode', SETTING.boostMode],
  ['epp', SETTING.epp],
  ['idleDisable', SETTING.idleDisable],
  ['idleStateMaximum', SETTING.idleStateMax],
];

type Pinned = Map<string, { ac: number | null; dc: number | null }>;

/** Single settings pinned by group policy (PowerSettings\<setting GUID>: ACSettingIndex / DCSettingIndex). */
export const policySettings = async (registry: Registry): Promise<Pinned> => {
  const found: Pinned = new Map();
  await Promise.all(
    CHECKED.map(async ([, guid]) => {
      const r = await registry.query(`${POLICY_KEY}\\${guid}`);
      if (r.state !== 'values') return;
      const n = (v: string | undefined) => (v === undefined ? null : Number(v));
      const ac = n(r.values.ACSettingIndex);
      const dc = n(r.values.DCSettingIndex);
      if (ac !== null || dc !== null) found.set(guid, { ac, dc });
    }),
  );
  return found;
};

/** What the scheme asks for (`wanted`) against what is in force (`current`, or a policy's pin). */
export const compareEffective = (wanted: QueryResult, current: QueryResult, pinned: Pinned): Effective => {
  const mismatches: Mismatch[] = [];
  const settings: string[] = [];
  for (const [name, guid] of CHECKED) {
    const want = acdc(wanted, guid);
    if (!want) continue;
    const policy = pinned.get(guid);
    const got = policy ?? acdc(current, guid);
    for (const power of ['ac', 'dc'] as const) {
      settings.push(`${name}.${power}`);
      const w = want[power];
      const g = got?.[power] ?? null;
      if (w === null || g === null || w === g) continue;
      mismatches.push({
        setting: `${name}.${power}`,
        wanted: w,
        got: g,
        cause:
          policy && policy[power] !== null
            ? `group policy pins this setting (${POLICY_KEY}\\${guid}); the plan's value never applies. Change the policy instead.`
            : 'the setting did not stick: the power manager reports another value for the active scheme (a driver, the firmware or another tool overrides it).',
      });
    }
  }
  return { checked: settings.length > 0, matches: mismatches.length === 0, settings, mismatches };
};
