/**
 * The common ProcessorSettings from a sysfs snapshot: one summary value per knob (`mixed` when CPUs
 * disagree, with per-CPU detail then), null for what this system does not expose.
 */
import { emptyProcessorSettings, type ProcessorSettings } from '../../domain/schemas.ts';
import { eppPercent } from './kinds.ts';
import { type CpuFreq, common, driverMode, type SysfsState } from './sysfs.ts';

const both = (v: number | null) => (v === null ? null : { ac: v, dc: v });

/** scaling_min/max_freq as % of the hardware maximum, when every CPU agrees. */
const freqPercent = (cpus: readonly CpuFreq[], pick: (c: CpuFreq) => number | null): number | null => {
  const values = cpus.map((c) => {
    const v = pick(c);
    return v !== null && c.hwMaxKHz ? String(Math.round((v / c.hwMaxKHz) * 100)) : null;
  });
  const v = common(values);
  return v === null || v === 'mixed' ? null : Number(v);
};

const disagree = (cpus: readonly CpuFreq[]): boolean =>
  cpus.some(
    (c) =>
      c.driver !== cpus[0]!.driver ||
      c.governor !== cpus[0]!.governor ||
      c.energyPreference !== cpus[0]!.energyPreference ||
      c.minKHz !== cpus[0]!.minKHz ||
      c.maxKHz !== cpus[0]!.maxKHz,
  );

export const processorSettings = (s: SysfsState): ProcessorSettings => {
  if (s.cpus.length === 0 && !s.platformProfile) return emptyProcessorSettings();
  const energyPreference = common(s.cpus.map((c) => c.energyPreference));
  const epp = energyPreference === 'mixed' ? null : eppPercent(energyPreference);
  // intel_pstate's own limits apply on top of the per-CPU ones and are what its users set.
  const minPct = s.intelPstate?.minPerfPct ?? freqPercent(s.cpus, (c) => c.minKHz);
  const maxPct = s.intelPstate?.maxPerfPct ?? freqPercent(s.cpus, (c) => c.maxKHz);
  const turbo =
    s.intelPstate?.noTurbo !== null && s.intelPstate?.noTurbo !== undefined
      ? !s.intelPstate.noTurbo
      : s.boost;
  return {
    ...emptyProcessorSettings(),
    minStatePercent: both(minPct),
    maxStatePercent: both(maxPct),
    epp: both(epp),
    governor: common(s.cpus.map((c) => c.governor)),
    driver: common(s.cpus.map((c) => c.driver)),
    energyPreference,
    turbo,
    platformProfile: s.platformProfile,
    driverMode: driverMode(s),
    ...(s.cpus.length > 1 && disagree(s.cpus)
      ? {
          cpus: s.cpus.map((c) => ({
            cpu: c.cpu,
            driver: c.driver,
            governor: c.governor,
            energyPreference: c.energyPreference,
            minFreqKHz: c.minKHz,
            maxFreqKHz: c.maxKHz,
            curFreqKHz: c.curKHz,
          })),
        }
      : {}),
  };
};
