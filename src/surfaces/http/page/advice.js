// @ts-check
// "Recommendation": the advice for the chosen workload with its summary, confidence, reasons and
// their facts, expected gains, the commands that apply it and the caveats. Reloaded when the
// workload changes.
import { api } from './api.js';
import { byId, command, facts, h, replace } from './dom.js';
import { section } from './errors.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['Recommendation']} Recommendation */

/**
 * A titled list, or nothing when it has no items.
 * @param {string} title
 * @param {string | undefined} cls
 * @param {HTMLLIElement[]} items
 */
const part = (title, cls, items) =>
  items.length ? [h('h3', {}, title), h('ul', { class: cls }, items)] : null;

/** @param {Recommendation} r */
const adviceView = (r) => [
  h('p', { class: `summary ${r.changeRecommended ? 'change' : 'ok'}`, id: 'advice-summary' }, r.summary),
  facts([
    [
      'Recommended plan',
      r.recommended
        ? `${r.recommended.name} (${r.recommended.kind})${r.recommended.installed ? '' : ', to be created'}`
        : 'none',
    ],
    ['Confidence', `${r.confidence}: ${r.confidenceReason}`],
    ['Based on', r.basis.text],
  ]),
  part(
    'Reasons',
    'reasons',
    r.reasons.map((x) =>
      h('li', {}, x.text, ' ', h('code', { class: 'muted' }, `${x.fact.name} = ${x.fact.value}`)),
    ),
  ),
  part(
    'Expected gain',
    undefined,
    (r.expectedGain ?? []).map((g) => h('li', {}, g.text)),
  ),
  part(
    'How to apply it',
    'actions',
    r.actions.map((a) => h('li', {}, h('span', {}, `${a.description} (${a.via})`), command(a.command))),
  ),
  r.halves ? h('p', { id: 'advice-halves' }, h('strong', {}, 'Both halves: '), r.halves.text) : null,
  part(
    'Settings for the costlier half',
    'halves-settings',
    (r.halves?.settings ?? []).map((a) =>
      h('li', {}, h('span', {}, `${a.description} (${a.via})`), command(a.command)),
    ),
  ),
  part(
    'Caveats',
    undefined,
    r.caveats.map((c) => h('li', {}, h('strong', {}, `${c.kind}: `), c.text)),
  ),
];

export const loadAdvice = () =>
  section(byId('advice'), 'the recommendation', async () => {
    byId('advice').setAttribute('aria-busy', 'true');
    const workload = encodeURIComponent(byId('advice-workload', HTMLSelectElement).value);
    const r = /** @type {Recommendation} */ (await api('GET', `/v1/recommendation?workload=${workload}`));
    replace(byId('advice'), adviceView(r));
  });

byId('advice-workload').addEventListener('change', () => loadAdvice());
byId('advice-form').addEventListener('submit', (e) => e.preventDefault());
