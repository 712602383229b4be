// @ts-check
// "Active plan": the plan in force, its owner, whether it can be changed here and why not, the
// desired plan, the service's notes (group policy, a VM, a placeholder driver...) and the effective
// processor settings with what each means for a burst of work.
import { api } from './api.js';
import { byId, facts, h, note, replace, thead } from './dom.js';
import { section } from './errors.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['ActivePlan']} ActivePlan */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['ProcessorSettings']} ProcessorSettings */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['AcDc']} AcDc */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['IdleStates']} IdleStates */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['Control']} Control */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['Effective']} Effective */

/** The kernel's "no limit" value of /dev/cpu_dma_latency. */
const NO_LATENCY_LIMIT_US = 2000000000;

/** @param {number | null} n */
const us = (n) => (n === null ? '–' : `${n} us`);

/**
 * The idle states (C-states): how deep idle cores sleep and what waking them costs.
 * @param {IdleStates} i
 */
const idleTable = (i) => {
  const w = i.windows;
  if (!i.states.length && !w) return null;
  const rows = i.states.map((s) =>
    h(
      'tr',
      { class: s.disabled ? 'muted' : '' },
      h('th', { scope: 'row' }, s.name),
      h('td', {}, us(s.exitLatencyUs)),
      h('td', {}, us(s.targetResidencyUs)),
      h('td', {}, s.timeShare === null ? '–' : `${(s.timeShare * 100).toFixed(1)}%`),
      h(
        'td',
        {},
        s.disabled
          ? 'disabled'
          : s.disabledOnCpus
            ? `disabled on cpu ${s.disabledOnCpus.join(', ')}`
            : 'enabled',
      ),
    ),
  );
  const qos = i.pmQos;
  return h(
    'div',
    { class: 'table-wrap', id: 'idle-states' },
    i.states.length
      ? h(
          'table',
          {},
          h(
            'caption',
            {},
            `Idle states${i.driver ? ` (${i.driver}${i.governor ? `, governor ${i.governor}` : ''})` : ''}`,
          ),
          thead(['State', 'Exit latency', 'Target residency', 'Share of idle time', 'State']),
          h('tbody', {}, rows),
        )
      : null,
    facts([
      [
        'Deepest idle state allowed',
        i.deepestEnabled
          ? `${i.deepestEnabled.name} (${us(i.deepestEnabled.exitLatencyUs)} to wake)`
          : undefined,
      ],
      [
        'PM QoS latency limit',
        qos
          ? qos.cpuDmaLatencyUs === null
            ? 'unreadable'
            : qos.cpuDmaLatencyUs >= NO_LATENCY_LIMIT_US
              ? 'none'
              : `${qos.cpuDmaLatencyUs} us${qos.limited ? ' (forbids deeper states)' : ''}`
          : undefined,
      ],
      ['Idle disable', acdc(w?.idleDisable, (x) => (x ? 'idle disabled' : 'idle enabled'))],
      ['Idle state maximum', acdc(w?.idleStateMaximum, (x) => (x ? `C${x}` : 'no limit'))],
      [
        'Idle promote / demote threshold',
        w?.promoteThreshold ? `${acdc(w.promoteThreshold)} / ${acdc(w.demoteThreshold)}` : undefined,
      ],
    ]),
  );
};

/**
 * Who controls the processor, with the evidence.
 * @param {Control} c
 */
const controlView = (c) =>
  h(
    'div',
    { id: 'control' },
    facts([['Processor controlled by', c.decidedBy]]),
    h(
      'ul',
      { class: 'evidence' },
      c.evidence.map((e) => h('li', {}, h('code', {}, e.source), ': ', e.text)),
    ),
  );

/**
 * The read-back after the last switch to this plan.
 * @param {Effective} e
 */
const effectiveView = (e) =>
  !e.checked
    ? null
    : e.matches
      ? h(
          'p',
          { class: 'muted', id: 'effective' },
          `Read back after the last switch: ${e.settings.length} setting(s), all in force.`,
        )
      : h(
          'div',
          { id: 'effective' },
          note(
            'warning',
            'Not fully in force.',
            `${e.mismatches.length} setting(s) did not take effect at the last switch:`,
          ),
          h(
            'ul',
            {},
            e.mismatches.map((m) =>
              h(
                'li',
                {},
                `${m.setting}: ${m.got ?? 'not applied'} (the plan asks for ${m.wanted}). ${m.cause}`,
              ),
            ),
          ),
        );

const boostModes = [
  'disabled',
  'enabled',
  'aggressive',
  'efficient enabled',
  'efficient aggressive',
  'aggressive at guaranteed',
  'efficient aggressive at guaranteed',
];

/**
 * A setting's mains and battery values, as one text when they agree.
 * @param {AcDc | null | undefined} v
 * @param {(x: number) => string} [fmt]
 */
const acdc = (v, fmt = (x) => String(x)) => {
  if (!v) return undefined;
  const a = v.ac === null ? '–' : fmt(v.ac);
  const d = v.dc === null ? '–' : fmt(v.dc);
  return a === d ? `${a} (AC and DC)` : `AC ${a}, DC ${d}`;
};

/**
 * The processor settings this system exposes, with what each means for a burst of work.
 * @param {ProcessorSettings} p
 */
const settingsTable = (p) => {
  /** @param {number} x */
  const pct = (x) => `${x}%`;
  /** @type {[string, string | null | undefined, string][]} */
  const all = [
    ['Minimum processor state', acdc(p.minStatePercent, pct), 'how low the clock may drop while idle'],
    ['Maximum processor state', acdc(p.maxStatePercent, pct), 'the ceiling'],
    ['Boost mode', acdc(p.boostMode, (x) => boostModes[x] ?? String(x)), 'turbo above the base clock'],
    ['Energy performance preference', acdc(p.epp, pct), '0% = performance, 100% = energy'],
    ['Core parking, minimum cores', acdc(p.coreParkingMinCores, pct), 'cores kept unparked'],
    ['Performance increase threshold', acdc(p.perfIncreaseThreshold, pct), 'busy % before the clock rises'],
    ['Performance increase time', acdc(p.perfIncreaseTime), 'intervals before the clock rises'],
    ['Governor', p.governor, 'cpufreq scaling governor'],
    ['Driver', p.driverMode ? `${p.driver} (${p.driverMode})` : p.driver, 'cpufreq scaling driver'],
    ['Energy preference', p.energyPreference, 'energy_performance_preference'],
    ['Turbo', p.turbo === null || p.turbo === undefined ? undefined : p.turbo ? 'on' : 'off', ''],
    ['Platform profile', p.platformProfile, 'ACPI platform profile'],
  ];
  const rows = all.filter(([, v]) => v !== undefined && v !== null);
  if (!rows.length) return h('p', { class: 'muted' }, 'This system exposes no processor settings.');
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      h('caption', {}, 'Processor settings'),
      thead(['Setting', 'Value', 'Meaning']),
      h(
        'tbody',
        {},
        rows.map(([k, v, m]) =>
          h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v), h('td', { class: 'muted' }, m)),
        ),
      ),
    ),
  );
};

/** @param {ActivePlan} a */
const activeView = (a) => {
  const plan = a.plan;
  return [
    plan
      ? h(
          'p',
          { class: 'plan-name', id: 'active-plan-name' },
          plan.name,
          ' ',
          h('span', { class: `badge kind-${plan.kind}` }, plan.kind),
          plan.edited ? h('span', { class: 'badge edited' }, 'edited') : null,
        )
      : h('p', { class: 'plan-name', id: 'active-plan-name' }, 'No power plan is exposed on this system.'),
    facts([
      ['Plan id', plan?.id],
      ['Owner', a.owner],
      ['Can be changed here', a.canSet ? 'yes' : 'no'],
      a.desired
        ? [
            'Desired plan',
            `${a.desired.planId}: ${a.desired.status}${a.desired.enforce ? ' (enforced)' : ''}`,
          ]
        : ['', ''],
    ]),
    a.policyManaged
      ? note(
          'warning',
          'Managed by policy.',
          'A policy (such as Windows group policy) sets the plan here and reverts a change at its next refresh; change the policy instead.',
        )
      : null,
    !a.canSet && a.cannotSetReason ? note('info', 'Read-only here.', a.cannotSetReason) : null,
    ...(a.warnings ?? []).map((w) => note('warning', 'Note:', w)),
    plan?.edited
      ? note(
          'warning',
          'Edited built-in plan.',
          `Its settings differ from the stock plan: ${(plan.differences ?? []).map((d) => `${d.setting} ${d.value} (stock ${d.stock})`).join(', ')}.`,
        )
      : null,
    a.effective ? effectiveView(a.effective) : null,
    settingsTable(a.processor),
    a.idle ? idleTable(a.idle) : null,
    a.control ? controlView(a.control) : null,
  ];
};

/**
 * Loads and shows the active plan; resolves with it, or undefined when it could not be loaded.
 * @returns {Promise<ActivePlan | undefined>}
 */
export const loadActive = async () => {
  /** @type {ActivePlan | undefined} */
  let active;
  await section(byId('active'), 'the active plan', async () => {
    active = /** @type {ActivePlan} */ (await api('GET', '/v1/plans/active'));
    replace(byId('active'), ...activeView(active));
  });
  return active;
};
