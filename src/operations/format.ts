/** Shared pieces of the CLI's human-readable output. */
import type { DesiredState } from '../domain/desired.ts';
import { type Control, type Effective, type IdleStates, NO_LATENCY_LIMIT_US } from '../domain/idle.ts';
import type { AcDc, Plan, ProcessorSettings } from '../domain/schemas.ts';
import { type Fact, facts } from '../lib/table.ts';

const edits = (p: Plan): string =>
  p.edited
    ? `  EDITED: ${(p.differences ?? []).map((d) => `${d.setting} ${d.value} (stock ${d.stock})`).join(', ')}`
    : '';

export const planLine = (p: Plan): string =>
  `${p.active ? '*' : ' '} ${p.id}  ${p.name}  [${p.kind}]${edits(p)}`;

const us = (n: number | null) => (n === null ? '?' : `${n} us`);

/** The idle states, one per line, with exit latency, residency, share of idle time and state. */
export const idleLines = (i: IdleStates): string[] => {
  const pmQos = (q: NonNullable<IdleStates['pmQos']>): string =>
    `cpu_dma_latency ${q.cpuDmaLatencyUs === null ? 'unreadable' : q.cpuDmaLatencyUs >= NO_LATENCY_LIMIT_US ? 'no limit' : us(q.cpuDmaLatencyUs)}` +
    `${q.limited ? ' (forbids deeper states)' : ''}`;
  return facts([
    [
      'Idle driver',
      i.driver || i.governor
        ? `${i.driver ?? 'none'}${i.governor ? `, governor ${i.governor}` : ''}`
        : undefined,
    ],
    ...i.states.map((s): Fact => {
      const share = s.timeShare === null ? '' : `, ${(s.timeShare * 100).toFixed(1)}% of idle time`;
      const off = s.disabled
        ? ', DISABLED'
        : s.disabledOnCpus
          ? `, disabled on cpu ${s.disabledOnCpus.join(',')}`
          : '';
      return [
        `Idle state ${s.name}`,
        `exit ${us(s.exitLatencyUs)}, residency ${us(s.targetResidencyUs)}${share}${off}`,
      ];
    }),
    [
      'Deepest idle state',
      i.deepestEnabled
        ? `${i.deepestEnabled.name} (${us(i.deepestEnabled.exitLatencyUs)} to wake)`
        : undefined,
    ],
    ['PM QoS', i.pmQos ? pmQos(i.pmQos) : undefined],
    ['Idle disable', acdc(i.windows?.idleDisable)],
    ['Idle state maximum', acdc(i.windows?.idleStateMaximum)],
    ['Idle promote threshold', acdc(i.windows?.promoteThreshold, '%')],
    ['Idle demote threshold', acdc(i.windows?.demoteThreshold, '%')],
  ]);
};

/** Who controls the processor, with the first pieces of evidence. */
export const controlLines = (c: Control): string[] =>
  facts([
    [
      'Controlled by',
      `${c.decidedBy}${c.clockControl === false ? ' (the OS cannot change the clock here)' : ''}`,
    ],
    ...c.evidence.slice(0, 4).map((e): Fact => ['', `${e.source}: ${e.text}`]),
  ]);

/** The read-back after a switch. */
export const effectiveLines = (e: Effective): string[] =>
  !e.checked
    ? []
    : facts(
        e.matches
          ? [['Read back', `${e.settings.length} setting(s) checked, all in force`]]
          : [
              ['Read back', `${e.mismatches.length} of ${e.settings.length} setting(s) NOT in force:`],
              ...e.mismatches.map(
                (m): Fact => ['', `${m.setting}: ${m.got ?? 'not applied'} (wanted ${m.wanted}): ${m.cause}`],
              ),
            ],
      );

const acdc = (v: AcDc | null | undefined, unit = ''): string | undefined =>
  v ? `AC ${v.ac ?? '-'}${unit}, DC ${v.dc ?? '-'}${unit}` : undefined;

/** Only the settings this system exposes, one per line. */
export const processorLines = (s: ProcessorSettings): string[] =>
  facts([
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
  ]);

/** get_desired_state and set_desired_power_plan answer the same state. */
export const formatDesired = (d: DesiredState): string =>
  d.status === 'none'
    ? 'No desired plan is set.'
    : facts(
        [
          [
            'Desired plan',
            `${d.planName ?? d.planId} (${d.planId}), from ${d.source === 'api' ? 'the API' : 'the configuration'}`,
          ],
          [
            'Status',
            `${d.status}${d.activePlanId && !d.inDesiredState ? `; in force: ${d.activePlanId}` : ''}`,
          ],
          [
            'Enforce',
            d.enforce ? `yes, checked every ${d.intervalSeconds} s` : 'no (drift is reported only)',
          ],
          ['Last check', d.checkerRunning ? (d.lastCheck ?? 'not yet') : undefined],
          [
            'Drifts',
            d.checkerRunning ? `${d.driftTotal} detected, ${d.correctedTotal} corrected` : undefined,
          ],
          ['Last error', d.lastError || undefined],
        ],
        { width: 14, indent: '' },
      ).join('\n');
