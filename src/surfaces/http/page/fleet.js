// The fleet view: every agent of the fleet file with its plan, kind, advice, burst penalty and
// drift, filtered by tag; and the plan switch for the shown hosts, dry run first, confirmed in the
// same dialog as the single-host switch. Shown only when this service has a fleet. Host answers are
// text only (never HTML): an agent's words cannot become markup here.
import { ApiError, api } from './api.js';
import { confirmSwitch } from './confirm.js';
import { h, replace } from './view.js';

const $ = (id) => document.getElementById(id);
const kinds = ['high-performance', 'balanced', 'power-saver', 'ultimate-performance'];
const fig = (n) => (Number.isFinite(n) ? `${n.toFixed(1)}%` : '–');

const advice = (x) =>
  x.recommendation
    ? x.recommendation.changeRecommended
      ? `Switch to ${x.recommendation.kind ?? '?'}`
      : 'Keep'
    : '–';

const statusTable = (s) =>
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
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Host', 'Status', 'Plan', 'Kind', 'Advice', 'Burst penalty', 'Drift'].map((t) =>
            h('th', { scope: 'col' }, t),
          ),
        ),
      ),
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
                  h('td', {}, x.plan?.name ?? 'none'),
                  h('td', {}, x.plan?.kind ?? '–'),
                  h('td', { class: x.recommendation?.changeRecommended ? 'change' : '' }, advice(x)),
                  h('td', {}, fig(x.burstPenaltyPercent)),
                  h('td', {}, x.drift ?? '–'),
                ]
              : [
                  h('td', {}, x.status),
                  h('td', { colspan: '5' }, `${x.error?.title ?? ''}: ${x.error?.detail ?? ''}`),
                ],
          ),
        ),
      ),
    ),
  );

const outcomeTable = (r, id) =>
  h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { id },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Host', 'Outcome', 'From', 'To'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        r.hosts.map((x) =>
          h(
            'tr',
            { 'data-host': x.name },
            h('th', { scope: 'row' }, x.name),
            x.error
              ? [h('td', {}, x.status), h('td', { colspan: '2' }, `${x.error.title}: ${x.error.detail}`)]
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
                  h('td', {}, x.before ? `${x.before.name} (${x.before.kind})` : '–'),
                  h('td', {}, x.after ? `${x.after.name} (${x.after.kind})` : '–'),
                ],
          ),
        ),
      ),
    ),
  );

/** Starts the fleet view; `may(scope)` and `reportError(what, err)` come from the page. */
export const initFleet = async ({ may, reportError }) => {
  let hosts;
  try {
    hosts = await api('GET', '/v1/fleet/hosts');
  } catch (err) {
    // No fleet file here (422), or a service without fleet routes (404): no fleet view.
    if (err instanceof ApiError && (err.status === 422 || err.status === 404)) return;
    $('fleet-section').hidden = false;
    replace($('fleet'), h('p', { class: 'error-text' }, err.message));
    return;
  }
  $('fleet-section').hidden = false;
  const tags = [...new Set(hosts.hosts.flatMap((x) => x.tags))].sort();
  replace(
    $('fleet-tag'),
    h('option', { value: '' }, `All hosts (${hosts.hosts.length})`),
    tags.map((t) => h('option', { value: t }, t)),
  );
  replace(
    $('fleet-plan'),
    kinds.map((k) => h('option', { value: k }, k)),
  );
  $('fleet-switch').hidden = !may('control');
  $('fleet-note').hidden = may('control');
  $('fleet-note').textContent = 'Switching the fleet needs a token with the control scope.';

  const selection = () => ($('fleet-tag').value ? { tags: [$('fleet-tag').value] } : {});
  const query = () => ($('fleet-tag').value ? `?tags=${encodeURIComponent($('fleet-tag').value)}` : '');

  const load = async () => {
    $('fleet').setAttribute('aria-busy', 'true');
    try {
      replace($('fleet'), statusTable(await api('GET', `/v1/fleet/status${query()}`)));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      replace($('fleet'), h('p', { class: 'error-text' }, err.message));
      reportError('Loading the fleet', err);
    }
  };

  $('fleet-tag').addEventListener('change', () => load());
  $('fleet-switch').addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = $('fleet-preview');
    const plan = $('fleet-plan').value;
    const which = $('fleet-tag').value ? `the hosts tagged ${$('fleet-tag').value}` : 'every host';
    button.disabled = true;
    let preview;
    try {
      preview = await api('PUT', '/v1/fleet/plans/active', { plan, ...selection(), dryRun: true });
    } catch (err) {
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
          const r = await api('PUT', '/v1/fleet/plans/active', { plan, ...selection() });
          replace(
            $('fleet-result'),
            h(
              'p',
              {},
              `${r.summary.changed} changed, ${r.summary.unchanged} unchanged, ${r.summary.failed} failed.`,
            ),
            outcomeTable(r, 'fleet-result-table'),
          );
        } catch (err) {
          reportError(`Switching ${which} to ${plan}`, err);
        }
        await load();
        $('fleet-result').setAttribute('tabindex', '-1');
        $('fleet-result').focus();
      },
    });
  });

  await load();
};
