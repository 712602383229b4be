// @ts-check
// "Benchmark history": the stored results, newest first, each with the plan it ran under; "Show"
// draws one under the benchmark form.
import { api } from './api.js';
import { byId, fig, h, replace, thead, when } from './dom.js';
import { section } from './errors.js';
import { showResult } from './result.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['BenchmarkList']} BenchmarkList */

/**
 * @param {BenchmarkList} list
 * @param {(id: string) => void} onShow
 */
const historyView = (list, onShow) =>
  list.benchmarks.length
    ? h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { id: 'history-table' },
          h('caption', {}, `${list.total} stored, newest first`),
          thead(['Started', 'Plan', 'Profile', 'Burst penalty', 'Single', 'All cores', '']),
          h(
            'tbody',
            {},
            list.benchmarks.map((b) =>
              h(
                'tr',
                { 'data-id': b.id },
                h('td', {}, when(b.startedAt)),
                h('td', {}, b.plan ?? 'none'),
                h('td', {}, b.profile),
                h('td', {}, `${fig(b.burstPenaltyPercent)}%${b.noisy ? ' (noisy)' : ''}`),
                h('td', {}, `${fig(b.singleThreadMops)} Mops/s`),
                h('td', {}, `${fig(b.allCoreMops)} Mops/s`),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'secondary small',
                      'aria-label': `Show result ${b.id}`,
                      onclick: () => onShow(b.id),
                    },
                    'Show',
                  ),
                ),
              ),
            ),
          ),
        ),
      )
    : h('p', { class: 'muted' }, 'No benchmark has run yet.');

/** Shows a stored result and moves focus to its heading. @param {string} id */
const show = (id) =>
  section(byId('bench-result'), `benchmark ${id}`, async () => {
    await showResult(id);
    document.getElementById('result-h')?.setAttribute('tabindex', '-1');
    document.getElementById('result-h')?.focus();
  });

/**
 * Loads the history; with `showLatest`, draws the newest result too.
 * @param {boolean} showLatest
 */
export const loadHistory = (showLatest) =>
  section(byId('history'), 'the benchmark history', async () => {
    const list = /** @type {BenchmarkList} */ (await api('GET', '/v1/benchmarks?limit=20'));
    replace(byId('history'), historyView(list, show));
    if (showLatest && list.benchmarks[0]) await showResult(list.benchmarks[0].id);
  });
