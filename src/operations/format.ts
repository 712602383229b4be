/** Shared pieces of the CLI's human-readable output. */
import type { DesiredState } from '../domain/desired.ts';
import { type Control, type Effective, type IdleStates, NO_LATENCY_LIMIT_US } from '../domain/idle.ts';
import type { AcDc, Plan, ProcessorSettings } from '../domain/schemas.ts';

const edits = (p: Plan): string =>
  p.edited
    ? `  EDITED: ${(p.differences ?? []).map((d) => `${d.setting} ${d.value} (stock ${d.stock})`).join(', ')}`
    : '';

export const planLine = (p: Plan): string =>
  `${p.active ? '*' : ' '} ${p.id}  ${p.name}  [${p.kind}]${edits(p)}`;

const us = (n: number | null) => (n === null ? '?' : `${n} us`);

/** The idle states, one per line, with exit latency, residency, share of idle time and state. */
export const idleLines = (i: IdleStates): string[] => {
  const rows: string[] = [];
  if (i.driver || i.governor)
    rows.push(
      `  ${'Idle driver'.padEnd(25)} ${i.driver ?? 'none'}${i.governor ? `, governor ${i.governor}` : ''}`,
    );
  for (const s of i.states) {
    const share = s.timeShare === null ? '' : `, ${(s.timeShare * 100).toFixed(1)}% of idle time`;
    const off = s.disabled
      ? ', DISABLED'
      : s.disabledOnCpus
        ? `, disabled on cpu ${s.disabledOnCpus.join(',')}`
        : '';
    rows.push(
      `  ${`Idle state ${s.name}`.padEnd(25)} exit ${us(s.exitLatencyUs)}, residency ${us(s.targetResidencyUs)}${share}${off}`,
    );
  }
  if (i.deepestEnabled)
    rows.push(
      `  ${'Deepest idle state'.padEnd(25)} ${i.deepestEnabled.name} (${us(i.deepestEnabled.exitLatencyUs)} to wake)`,
    );
  if (i.pmQos)
    rows.push(
      `  ${'PM QoS'.padEnd(25)} cpu_dma_latency ${i.pmQos.cpuDmaLatencyUs === null ? 'unreadable' : i.pmQos.cpuDmaLatencyUs >= NO_LATENCY_LIMIT_US ? 'no limit' : us(i.pmQos.cpuDmaLatencyUs)}` +
        `${i.pmQos.limited ? ' (forbids deeper states)' : ''}`,
    );
  if (i.windows) {
    const w = i.windows;
    rows.push(
      ...[
        ['Idle disable', acdc(w.idleDisable)],
        ['Idle state maximum', acdc(w.idleStateMaximum)],
        ['Idle promote threshold', acdc(w.promoteThreshold, '%')],
        ['Idle demote threshold', acdc(w.demoteThreshold, '%')],
      ]
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `  ${k!.padEnd(25)} ${v}`),
    );
  }
  return rows;
};

/** Who controls the processor, with the first pieces of evidence. */
export const controlLines = (c: Control): string[] => [
  `  ${'Controlled by'.padEnd(25)} ${c.decidedBy}${c.clockControl === false ? ' (the OS cannot change the clock here)' : ''}`,
  ...c.evidence.slice(0, 4).map((e) => `  ${''.padEnd(25)} ${e.source}: ${e.text}`),
];

/** The read-back after a switch. */
export const effectiveLines = (e: Effective): string[] =>
  !e.checked
    ? []
    : e.matches
      ? [`  ${'Read back'.padEnd(25)} ${e.settings.length} setting(s) checked, all in force`]
      : [
          `  ${'Read back'.padEnd(25)} ${e.mismatches.length} of ${e.settings.length} setting(s) NOT in force:`,
          ...e.mismatches.map(
            (m) =>
              `  ${''.padEnd(25)} ${m.setting}: ${m.got ?? 'not applied'} (wanted ${m.wanted}): ${m.cause}`,
          ),
        ];

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
