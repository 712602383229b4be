// @ts-check
// One benchmark result under the benchmark form: when and how it ran, its summary figures, the two
// charts (redrawn when their width changes) and the same figures as a table.
import { api } from './api.js';
import { burstChart, sustainedChart } from './chart.js';
import { byId, facts, fig, h, note, replace, thead, when } from './dom.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['BenchmarkResult']} BenchmarkResult */

/** @param {BenchmarkResult} r */
const resultHeader = (r) => [
  h('h3', { id: 'result-h' }, `Result ${r.id}`),
  facts([
    [
      'Ran',
      `${when(r.startedAt)}, ${r.profile}, ${fig(r.durationMs / 1000, 1)} s${r.forced ? ', forced while busy' : ''}`,
    ],
    ['Plan', r.summary.plan ?? 'none'],
    ['Burst penalty', `${fig(r.summary.burstPenaltyPercent)}% after the longest idle gap`],
    [
      'Throughput',
      `${fig(r.summary.singleThreadMops)} Mops/s single, ${fig(r.summary.allCoreMops)} Mops/s on ${r.threads} threads`,
    ],
  ]),
  ...r.warnings.map((w) => note('warning', 'Note:', w)),
];

/** @param {BenchmarkResult} r */
const resultTable = (r) =>
  h(
    'details',
    {},
    h('summary', {}, 'Figures as a table'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        thead(['Idle gap', 'Burst median', 'p10', 'p90', 'Penalty', 'Ramp-up median']),
        h(
          'tbody',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, 'warm'),
            h('td', {}, `${fig(r.phases.warmBaseline.burstMs.median, 2)} ms`),
            h('td', {}, fig(r.phases.warmBaseline.burstMs.p10, 2)),
            h('td', {}, fig(r.phases.warmBaseline.burstMs.p90, 2)),
            h('td', {}, '–'),
            h('td', {}, '–'),
          ),
          r.phases.burstsAfterIdle.map((b) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, `${b.idleGapMs} ms`),
              h('td', {}, `${fig(b.burstMs.median, 2)} ms`),
              h('td', {}, fig(b.burstMs.p10, 2)),
              h('td', {}, fig(b.burstMs.p90, 2)),
              h('td', {}, `${fig(b.penaltyPercent.value)}%${b.noisy ? ' (noisy)' : ''}`),
              h('td', {}, `${fig(b.rampUpMs.median, 1)} ms`),
            ),
          ),
        ),
      ),
    ),
  );

/**
 * The wake-up probe beside the ramp chart: what one request pays after each idle gap (overshoot
 * plus the first unit's extra time over warm), median and p99; nothing for results without it.
 * @param {BenchmarkResult} r
 */
const wakeUpFigures = (r) => {
  const w = r.phases.wakeUp;
  if (!w) return null;
  return h(
    'figure',
    { id: 'wakeup' },
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { id: 'wakeup-table' },
        thead(['Idle gap', 'Cost p50', 'Cost p99', 'Overshoot p50', 'Overshoot p99', 'First unit p50']),
        h(
          'tbody',
          {},
          w.gaps.map((g) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, `${fig(g.gapUs / 1000, g.gapUs < 1000 ? 1 : 0)} ms`),
              h('td', {}, `${fig(g.costUs.p50, 1)} µs`),
              h('td', {}, `${fig(g.costUs.p99, 1)} µs`),
              h('td', {}, `${fig(g.overshootUs.p50, 1)} µs`),
              h('td', {}, `${fig(g.overshootUs.p99, 1)} µs`),
              h('td', {}, `${fig(g.firstUnitSlowdown.p50, 2)}×`),
            ),
          ),
        ),
      ),
    ),
    h(
      'figcaption',
      {},
      `Wake-up after each idle gap: what one request pays (timer overshoot plus the first unit's extra time over warm), ` +
        `${w.rounds} samples per gap; the small unit takes ${fig(w.unitUs.value, 1)} µs warm` +
        `${typeof r.summary.wakeUpUs === 'number' ? `; median over the gaps ${fig(r.summary.wakeUpUs, 1)} µs per request` : ''}.`,
    ),
  );
};

/** @type {BenchmarkResult | undefined} */
let shown;

/** @param {BenchmarkResult} r */
const renderResult = (r) => {
  shown = r;
  const target = byId('bench-result');
  const width = target.clientWidth;
  replace(
    target,
    ...resultHeader(r),
    h(
      'figure',
      {},
      burstChart(r, width),
      h(
        'figcaption',
        {},
        'Burst time after each idle gap (median, whiskers p10–p90); dashed: the warm core.',
      ),
    ),
    wakeUpFigures(r),
    h(
      'figure',
      {},
      sustainedChart(r, width),
      h(
        'figcaption',
        {},
        `Sustained throughput; all cores run ${r.phases.sustainedAllCore.speedup.value.toFixed(1)}× one thread.`,
      ),
    ),
    resultTable(r),
  );
};

/**
 * Fetches a stored result and shows it.
 * @param {string} id
 */
export const showResult = async (id) =>
  renderResult(/** @type {BenchmarkResult} */ (await api('GET', `/v1/benchmarks/${encodeURIComponent(id)}`)));

// Charts are drawn for their width: redraw when it changes (a rotated phone, a resized portal frame).
let lastWidth = 0;
new ResizeObserver(() => {
  const width = byId('bench-result').clientWidth;
  if (shown && Math.abs(width - lastWidth) > 40) renderResult(shown);
  lastWidth = width;
}).observe(byId('bench-result'));
