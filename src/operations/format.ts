/** Shared pieces of the CLI's human-readable output. */
import type { DesiredState } from '../domain/desired.ts';
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

/** get_desired_state and set_desired_power_plan answer the same state. */
export const formatDesired = (d: DesiredState): string =>
  d.status === 'none'
    ? 'No desired plan is set.'
    : [
        `Desired plan   ${d.planName ?? d.planId} (${d.planId}), from ${d.source === 'api' ? 'the API' : 'the configuration'}`,
        `Status         ${d.status}${d.activePlanId && !d.inDesiredState ? `; in force: ${d.activePlanId}` : ''}`,
        `Enforce        ${d.enforce ? `yes, checked every ${d.intervalSeconds} s` : 'no (drift is reported only)'}`,
        ...(d.checkerRunning
          ? [
              `Last check     ${d.lastCheck ?? 'not yet'}`,
              `Drifts         ${d.driftTotal} detected, ${d.correctedTotal} corrected`,
            ]
          : []),
        ...(d.lastError ? [`Last error     ${d.lastError}`] : []),
      ].join('\n');
