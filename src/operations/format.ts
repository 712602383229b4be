/** Shared pieces of the CLI's human-readable output. */
import type { AcDc, Plan, ProcessorSettings } from '../domain/schemas.ts';

export const planLine = (p: Plan): string => `${p.active ? '*' : ' '} ${p.id}  ${p.name}  [${p.kind}]`;

const acdc = (v: AcDc | null | undefined, unit = ''): string | undefined =>
  v ? `AC ${v.ac ?? '-'}${unit}, DC ${v.dc ?? '-'}${unit}` : undefined;

/** Only the settings this system exposes, one per line. */
export const processorLines = (s: ProcessorSettings): string[] => {
  const rows: [string, string | undefined][] = [
    ['Minimum processor state', acdc(s.minStatePercent, '%')],
    ['Maximum processor state', acdc(s.maxStatePercent, '%')],
    ['Boost mode', acdc(s.boostMode)],
    ['Energy perf. preference', acdc(s.epp)],
    ['Core parking min cores', acdc(s.coreParkingMinCores, '%')],
    ['Perf. increase threshold', acdc(s.perfIncreaseThreshold, '%')],
    ['Perf. increase time', acdc(s.perfIncreaseTime)],
    ['Governor', s.governor ?? undefined],
    ['Driver', s.driver ?? undefined],
    ['Energy preference', s.energyPreference ?? undefined],
    ['Turbo', s.turbo === null ? undefined : s.turbo ? 'on' : 'off'],
    ['Platform profile', s.platformProfile ?? undefined],
  ];
  return rows.filter(([, v]) => v !== undefined).map(([k, v]) => `  ${k.padEnd(25)} ${v}`);
};
