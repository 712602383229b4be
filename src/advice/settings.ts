/**
 * Reads what the active plan's processor settings mean for performance, independent of the plan's
 * name: a renamed or custom plan with a 100% minimum state is as good as High performance, and a
 * "High performance" tuned profile is judged by the governor it actually left in force.
 */
import type { AdviceReason } from '../domain/advice.ts';
import type { ActivePlan } from '../domain/schemas.ts';
import { fact } from './verdict.ts';

/** How the active plan treats an idle CPU that gets work. */
export type Posture = 'performance' | 'balanced' | 'power-saving' | 'unknown';

export interface SettingsReading {
  posture: Posture;
  /** Why: each finding with the setting it comes from. */
  findings: AdviceReason[];
  /** True when the reading is beyond doubt (a pinned minimum clock, a 100% minimum state). */
  decisive: boolean;
}

/**
 * Only the drivers that choose the clock themselves (intel_pstate and amd-pstate-epp in active
 * mode) read `powersave` as "balanced"; under every other driver (intel_cpufreq = intel_pstate
 * passive, acpi-cpufreq, ...) the powersave governor runs the CPU at its minimum frequency.
 */
const selfClockingDrivers = new Set(['intel_pstate', 'amd-pstate-epp']);

const isPassivePowersave = (driver: string | null, mode: string | null | undefined): boolean =>
  driver !== null && (!selfClockingDrivers.has(driver) || mode === 'passive');

const fromWindows = (a: ActivePlan): SettingsReading | undefined => {
  const p = a.processor;
  const min = p.minStatePercent?.ac;
  if (min === null || min === undefined) return undefined;
  const findings: AdviceReason[] = [];
  const max = p.maxStatePercent?.ac ?? null;
  const boost = p.boostMode?.ac ?? null;
  const epp = p.epp?.ac ?? null;
  let posture: Posture = min >= 100 ? 'performance' : 'balanced';
  findings.push(
    fact(
      'minStatePercent.ac',
      min,
      min >= 100
        ? 'minimum processor state is 100% on AC: the cores are kept at full clock while idle'
        : `minimum processor state is ${min}% on AC: the clock drops while the server waits and ramps up only after work arrives`,
    ),
  );
  if (max !== null && max < 100) {
    posture = 'power-saving';
    findings.push(
      fact(
        'maxStatePercent.ac',
        max,
        `maximum processor state is ${max}% on AC: the CPU never reaches its full clock`,
      ),
    );
  }
  if (boost === 0) {
    posture = posture === 'performance' ? 'balanced' : 'power-saving';
    findings.push(fact('boostMode.ac', 0, 'processor boost (turbo) is disabled on AC'));
  }
  if (epp !== null && epp > 50 && posture !== 'performance') {
    findings.push(
      fact('epp.ac', epp, `energy performance preference is ${epp} on AC: it leans towards saving energy`),
    );
  }
  const parking = p.coreParkingMinCores?.ac;
  if (parking !== null && parking !== undefined && parking < 100 && posture !== 'performance') {
    findings.push(
      fact(
        'coreParkingMinCores.ac',
        parking,
        `core parking may park all but ${parking}% of the cores while load is low`,
      ),
    );
  }
  return { posture, findings, decisive: min >= 100 || min <= 10 || posture === 'power-saving' };
};

const fromLinux = (a: ActivePlan): SettingsReading | undefined => {
  const p = a.processor;
  const findings: AdviceReason[] = [];
  if (p.turbo === false) findings.push(fact('turbo', false, 'turbo / boost is disabled'));
  if (p.platformProfile === 'low-power') {
    findings.push(fact('platformProfile', 'low-power', 'the ACPI platform profile is low-power'));
  }
  const gov = p.governor;
  if (gov === null) return undefined;
  const driver = p.driver;
  const driverText = `${driver ?? 'unknown driver'}${p.driverMode ? `, ${p.driverMode} mode` : ''}`;
  if (gov === 'performance') {
    findings.unshift(fact('governor', gov, `the cpufreq governor is performance (${driverText})`));
    return { posture: p.turbo === false ? 'balanced' : 'performance', findings, decisive: true };
  }
  if (gov === 'powersave' && isPassivePowersave(driver, p.driverMode)) {
    findings.unshift(
      fact(
        'governor',
        `powersave on ${driverText}`,
        `the powersave governor on ${driverText} pins the CPU at its minimum frequency`,
      ),
    );
    return { posture: 'power-saving', findings, decisive: true };
  }
  if (gov === 'powersave') {
    const pref = p.energyPreference;
    const posture: Posture =
      pref === 'performance'
        ? 'performance'
        : pref === 'power' || pref === 'balance_power'
          ? 'power-saving'
          : 'balanced';
    findings.unshift(
      fact(
        'energyPreference',
        pref,
        `the powersave governor on ${driverText} lets the hardware pick the clock; its energy preference is ${pref ?? 'not exposed'}`,
      ),
    );
    return {
      posture: p.turbo === false && posture === 'performance' ? 'balanced' : posture,
      findings,
      decisive: pref !== null,
    };
  }
  findings.unshift(
    fact(
      'governor',
      gov,
      `the cpufreq governor is ${gov} (${driverText}): it raises the clock only once load is seen`,
    ),
  );
  return {
    posture: 'balanced',
    findings,
    decisive: gov === 'schedutil' || gov === 'ondemand' || gov === 'conservative',
  };
};

/** Falls back on the plan's kind when no processor setting is exposed. */
const fromKind = (a: ActivePlan): SettingsReading => {
  const plan = a.plan;
  if (!plan) return { posture: 'unknown', findings: [], decisive: false };
  const posture: Posture =
    plan.kind === 'ultimate-performance' || plan.kind === 'high-performance'
      ? 'performance'
      : plan.kind === 'balanced'
        ? 'balanced'
        : plan.kind === 'power-saver'
          ? 'power-saving'
          : 'unknown';
  return {
    posture,
    findings: [
      fact(
        'plan.kind',
        plan.kind,
        `no processor setting is exposed here; the plan ${plan.name} is of kind ${plan.kind}`,
      ),
    ],
    decisive: false,
  };
};

export const readSettings = (active: ActivePlan): SettingsReading =>
  fromWindows(active) ?? fromLinux(active) ?? fromKind(active);
