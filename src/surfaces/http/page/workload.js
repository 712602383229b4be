// @ts-check
// "Workload cost": what the plan in force costs the work running on this server, from the OS's
// idle counters since the previous look (no wait), or over 30 s on demand, with the estimate's
// range and basis; an idle server says so instead of a number.
import { api } from './api.js';
import { byId, facts, h, replace } from './dom.js';
import { section } from './errors.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['WorkloadCost']} WorkloadCost */

/** @param {number | null} x @param {string} unit */
const num = (x, unit) => (x === null ? '–' : `${x}${unit}`);

/** @param {WorkloadCost} w */
const workloadView = (w) => {
  const o = w.observation;
  const e = w.estimate;
  return [
    h(
      'p',
      { class: `summary ${e && e.addedPercent >= 5 ? 'change' : 'ok'}`, id: 'workload-summary' },
      w.summary,
    ),
    facts([
      ['Observed', `${o.windowSeconds} s (${o.since}), ${o.cpus} CPU(s), from ${o.source}`],
      ['Busy', o.busyShare === null ? '–' : `${Math.round(o.busyShare * 1000) / 10}%`],
      [
        'Idle entries',
        `${num(o.idleEntriesPerSecond, '/s')}, mean idle ${num(o.meanIdlePeriodUs, ' µs')}, mean busy ${num(o.meanBusyPeriodUs, ' µs')}${o.workBurstsPerSecond != null ? `; ${o.workBurstsPerSecond} bursts of work/s${o.perCpu.some((c) => c.workInUnits) ? ' (in 1 ms units)' : ''}` : ''}`,
      ],
      [
        'Estimate',
        e
          ? `+${e.addedPercent}% (${e.low}–${e.high}%): wake-up ${e.wakeUpPercent}%, clock ramp ${e.rampPercent}%, ${e.addedUsPerWakeup} µs per wake-up; basis ${e.basis}${e.benchmarkId ? ` (${e.benchmarkId})` : ''}`
          : (w.reason ?? '–'),
      ],
      [
        "The platform's own ramp (left out)",
        e?.platformPercent !== undefined
          ? `${e.platformPercent}%`
          : 'not measured (no benchmark under a performance plan)',
      ],
      [
        'A performance plan would recover',
        e?.recoverablePercent !== undefined
          ? `${e.recoverablePercent}%`
          : 'not measured (no benchmark under a performance plan)',
      ],
    ]),
    o.states.length
      ? h(
          'ul',
          { id: 'workload-states' },
          o.states.map((s) =>
            h(
              'li',
              {},
              `${s.name}: ${Math.round(s.share * 1000) / 10}% of idle, ${s.entriesPerSecond}/s, mean ${num(s.meanPeriodUs, ' µs')}, exit latency ${num(s.exitLatencyUs, ' µs')}`,
            ),
          ),
        )
      : null,
  ];
};

/** @param {string} query */
const load = (query) =>
  section(byId('workload'), 'the workload cost', async () => {
    byId('workload').setAttribute('aria-busy', 'true');
    replace(
      byId('workload'),
      workloadView(/** @type {WorkloadCost} */ (await api('GET', `/v1/workload${query}`))),
    );
  });

export const loadWorkload = () => load('');

byId('workload-observe').addEventListener('click', async () => {
  const button = byId('workload-observe', HTMLButtonElement);
  button.disabled = true;
  try {
    await load('?window=30s');
  } finally {
    button.disabled = false;
  }
});
