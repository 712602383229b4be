// @ts-check
// The fleet view: every agent of the fleet file with its plan, kind, advice, burst penalty and
// drift, filtered by tag; and the plan switch for the shown hosts, dry run first, confirmed in the
// same dialog as the single-host switch. Shown only when this service has a fleet. Host answers are
// text only (never HTML): an agent's words cannot become markup here, and every cell holding them
// (a host's reportedByAgent) is marked as that agent's words, quoted, so none passes for ours.
import { ApiError, api } from './api.js';
import { confirmSwitch } from './confirm.js';
import { byId, fig, h, replace, thead } from './dom.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['FleetHostList']} FleetHostList */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['FleetStatus']} FleetStatus */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['FleetHostStatus']} FleetHostStatus */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['FleetSetResult']} FleetSetResult */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['PlanKind']} PlanKind */

/** @type {PlanKind[]} */
const kinds = ['high-performance', 'balanced', 'power-saver', 'ultimate-performance'];
/** @param {number | null | undefined} n */
const percent = (n) => (typeof n === 'number' && Number.isFinite(n) ? `${fig(n, 1)}%` : '–');

/** @param {FleetHostStatus} x */
const advice = (x) =>
  x.recommendation
    ? x.recommendation.changeRecommended
      ? `Switch to ${x.recommendation.kind ?? '?'}`
      : 'Keep'
    : '–';

/**
 * What may make the plan's name misleading there: an edited built-in plan, settings that did not
 * take effect at the last switch, and a host where firmware or the hypervisor decides.
 * @param {FleetHostStatus} x
 */
const checks = (x) =>
  [
    x.edited ? 'edited plan' : '',
    x.mismatches ? `${x.mismatches} setting(s) not in force` : '',
    x.controlledBy === 'hypervisor' || x.controlledBy === 'firmware' ? `${x.controlledBy} decides` : '',
  ]
    .filter(Boolean)
    .join(', ') || '–';

/**
 * Where the answer comes from: the agents asked now, or Prometheus' latest scrapes (then how old).
 * @param {FleetStatus} s
 */
const sourceNote = (s) =>
  s.source.kind === 'prometheus'
    ? `From Prometheus (${s.source.name}), as last scraped; evaluated at ${s.source.evaluatedAt ?? '?'}.`
    : `Asked each agent (${s.source.name}).`;

/**
 * Whether the text at `pointer` of a host's answer was written by its agent.
 * @param {{ reportedByAgent: string[] }} x
 * @param {string} pointer
 */
const byAgent = (x, pointer) => x.reportedByAgent.some((p) => pointer === p || pointer.startsWith(`${p}/`));

/** What a cell of an agent's own words says about itself (its tooltip and accessible description). */
const AGENT_WORDS = "In this agent's own words, as it reported them";

/**
 * A cell with `text`; when the agent wrote it (`pointers` in its reportedByAgent), marked as the
 * agent's words: quoted by the style sheet, titled, with `extra` attributes kept.
 * @param {{ reportedByAgent: string[] }} x
 * @param {string[]} pointers
 * @param {string} text
 * @param {Record<string, string>} [extra]
 */
const cell = (x, pointers, text, extra = {}) =>
  pointers.some((p) => byAgent(x, p))
    ? h('td', { ...extra, class: `${extra.class ?? ''} agent-text`.trim(), title: AGENT_WORDS }, text)
    : h('td', extra, text);

/** @param {FleetStatus} s */
const statusTable = (s) => [
  h('p', { id: 'fleet-source', class: 'muted' }, sourceNote(s)),
  h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { id: 'fleet-table' },
      h(
        'caption',
        {},
        `${s.summary.total} hosts: ${s.summary.ok} ok, ${s.summary.unreachable} unreachable, ` +
          `${s.summary.unauthorized} unauthorized, ${s.summary.error} error; ${s.summary.changeRecommended} advised to switch`,
      ),
      thead(['Host', 'Status', 'Plan', 'Kind', 'Advice', 'Burst penalty', 'Drift', 'Checks']),
      h(
        'tbody',
        {},
        s.hosts.map((x) =>
          h(
            'tr',
            { 'data-host': x.name, class: x.status === 'ok' ? '' : 'failed' },
            h('th', { scope: 'row' }, x.name),
            x.status === 'ok'
              ? [
                  h('td', {}, 'ok'),
                  x.plan ? cell(x, ['/plan/name'], x.plan.name) : h('td', {}, 'none'),
                  h('td', {}, x.plan?.kind ?? '–'),
                  h('td', { class: x.recommendation?.changeRecommended ? 'change' : '' }, advice(x)),
                  h('td', {}, percent(x.burstPenaltyPercent)),
                  h('td', {}, x.drift ?? '–'),
                  h('td', { class: checks(x) === '–' ? '' : 'change' }, checks(x)),
                ]
              : [
                  h('td', {}, x.status),
                  cell(
                    x,
                    ['/error/title', '/error/detail'],
                    `${x.error?.title ?? ''}: ${x.error?.detail ?? ''}`,
                    {
                      colspan: '6',
                    },
                  ),
                ],
          ),
        ),
      ),
    ),
  ),
];

/**
 * @param {FleetSetResult} r
 * @param {string} id
 */
const outcomeTable = (r, id) =>
  h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { id },
      thead(['Host', 'Outcome', 'From', 'To']),
      h(
        'tbody',
        {},
        r.hosts.map((x) =>
          h(
            'tr',
            { 'data-host': x.name },
            h('th', { scope: 'row' }, x.name),
            x.error
              ? [
                  h('td', {}, x.status),
                  cell(x, ['/error/title', '/error/detail'], `${x.error.title}: ${x.error.detail}`, {
                    colspan: '2',
                  }),
                ]
              : [
                  h(
                    'td',
                    {},
                    r.dryRun
                      ? x.changed
                        ? 'would change'
                        : 'already on it'
                      : x.changed
                        ? 'changed'
                        : 'unchanged',
                  ),
                  cell(x, ['/before'], x.before ? `${x.before.name} (${x.before.kind})` : '–'),
                  cell(x, ['/after'], x.after ? `${x.after.name} (${x.after.kind})` : '–'),
                ],
          ),
        ),
      ),
    ),
  );

byId('fleet-filter').addEventListener('submit', (e) => e.preventDefault());

/**
 * Starts the fleet view; `may(scope)` and `reportError(what, err)` come from the page. Without a
 * configured fleet (`configured`, from the system facts) it asks nothing and stays hidden.
 * @param {{
 *   configured: boolean,
 *   may: (scope: 'read' | 'benchmark' | 'control') => boolean,
 *   reportError: (what: string, err: ApiError) => void,
 * }} page
 */
export const initFleet = async ({ configured, may, reportError }) => {
  if (!configured) return;
  let hosts;
  try {
    hosts = /** @type {FleetHostList} */ (await api('GET', '/v1/fleet/hosts'));
  } catch (err) {
    // No fleet file here (422), or a service without fleet routes (404): no fleet view.
    if (!(err instanceof ApiError)) throw err;
    if (err.status === 422 || err.status === 404) return;
    byId('fleet-section').hidden = false;
    replace(byId('fleet'), h('p', { class: 'error-text' }, err.message));
    return;
  }
  byId('fleet-section').hidden = false;
  const tag = byId('fleet-tag', HTMLSelectElement);
  const planSelect = byId('fleet-plan', HTMLSelectElement);
  const tags = [...new Set(hosts.hosts.flatMap((x) => x.tags))].sort();
  replace(
    tag,
    h('option', { value: '' }, `All hosts (${hosts.hosts.length})`),
    tags.map((t) => h('option', { value: t }, t)),
  );
  replace(
    planSelect,
    kinds.map((k) => h('option', { value: k }, k)),
  );
  byId('fleet-switch').hidden = !may('control');
  byId('fleet-note').hidden = may('control');
  byId('fleet-note').textContent = 'Switching the fleet needs a token with the control scope.';

  const selection = () => (tag.value ? { tags: [tag.value] } : {});
  const query = () => (tag.value ? `?tags=${encodeURIComponent(tag.value)}` : '');

  const load = async () => {
    byId('fleet').setAttribute('aria-busy', 'true');
    try {
      replace(
        byId('fleet'),
        statusTable(/** @type {FleetStatus} */ (await api('GET', `/v1/fleet/status${query()}`))),
      );
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      replace(byId('fleet'), h('p', { class: 'error-text' }, err.message));
      reportError('Loading the fleet', err);
    }
  };

  tag.addEventListener('change', () => load());
  byId('fleet-switch').addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = byId('fleet-preview', HTMLButtonElement);
    const plan = planSelect.value;
    const which = tag.value ? `the hosts tagged ${tag.value}` : 'every host';
    button.disabled = true;
    let preview;
    try {
      preview = /** @type {FleetSetResult} */ (
        await api('PUT', '/v1/fleet/plans/active', { plan, ...selection(), dryRun: true })
      );
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      reportError(`Previewing ${plan} on ${which}`, err);
      button.disabled = false;
      return;
    }
    confirmSwitch({
      title: `Switch ${which} to ${plan}?`,
      body: [
        h(
          'p',
          {},
          `${preview.summary.changed} would change, ${preview.summary.unchanged} are already on it, ${preview.summary.failed} cannot be switched.`,
        ),
        outcomeTable(preview, 'fleet-preview-table'),
        h(
          'p',
          { class: 'muted' },
          'This preview changed nothing (dry run). Each host audits its own change.',
        ),
      ],
      canConfirm: preview.summary.changed > 0,
      opener: button,
      onConfirm: async () => {
        try {
          const r = /** @type {FleetSetResult} */ (
            await api('PUT', '/v1/fleet/plans/active', { plan, ...selection() })
          );
          replace(
            byId('fleet-result'),
            h(
              'p',
              {},
              `${r.summary.changed} changed, ${r.summary.unchanged} unchanged, ${r.summary.failed} failed.`,
            ),
            outcomeTable(r, 'fleet-result-table'),
          );
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          reportError(`Switching ${which} to ${plan}`, err);
        }
        await load();
        byId('fleet-result').setAttribute('tabindex', '-1');
        byId('fleet-result').focus();
      },
    });
  });

  await load();
};
