// The status page: loads every section from the REST API, offers the controls the caller's scopes
// allow (switch plan with a dry-run preview and a confirmation, run the benchmark), and shows every
// API error with the problem's detail.
import { ApiError, api, forgetToken, getToken, onTokenNeeded, setToken } from './api.js';
import { burstChart, sustainedChart } from './chart.js';
import { confirmSwitch } from './confirm.js';
import { initFleet } from './fleet.js';
import {
  activeView,
  adviceView,
  errorBox,
  h,
  historyView,
  holdsView,
  plansView,
  previewView,
  replace,
  resultHeader,
  resultTable,
  systemView,
} from './view.js';

const $ = (id) => document.getElementById(id);
const state = { allows: [], active: null, system: null };
const may = (scope) => state.allows.includes(scope);

/** Adds an error to the alert region at the top, with a button to dismiss it. */
const reportError = (what, err) => {
  const box = errorBox(what, err);
  box.append(' ', h('button', { type: 'button', class: 'link', onclick: () => box.remove() }, 'Dismiss'));
  $('errors').append(box);
};

/** Runs one section's loader; a failure is shown in the section and at the top, never swallowed. */
const section = async (target, what, load) => {
  try {
    await load();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (target) replace(target, errorBox(`Could not load ${what}`, err));
    reportError(`Loading ${what}`, err);
  }
};

// --- token prompt -------------------------------------------------------------------------------

onTokenNeeded(
  (message) =>
    new Promise((resolve) => {
      const dialog = $('token');
      const opener = document.activeElement;
      $('token-error').textContent = getToken() ? message || 'The token was refused.' : '';
      $('token-input').value = '';
      dialog.addEventListener(
        'close',
        () => {
          const value = $('token-input').value.trim();
          const ok = dialog.returnValue === 'ok' && value !== '';
          if (ok) setToken(value);
          dialog.returnValue = '';
          opener?.focus?.();
          resolve(ok);
        },
        { once: true },
      );
      dialog.showModal();
      $('token-input').focus();
    }),
);

$('forget-token').addEventListener('click', () => {
  forgetToken();
  location.reload();
});

// --- sections -----------------------------------------------------------------------------------

const loadCaller = () =>
  section(null, 'who you are', async () => {
    const me = await api('GET', '/v1/whoami');
    state.allows = me.allows;
    $('whoami').textContent =
      me.name === 'local'
        ? 'Local caller (no token file): every scope.'
        : `Signed in as ${me.name} (${me.scopes.join(', ')}).`;
    $('forget-token').hidden = !getToken();
  });

const loadSystem = () =>
  section($('system'), 'the system facts', async () => {
    const s = await api('GET', '/v1/system');
    state.system = s;
    $('host').textContent = `· ${s.hostname}`;
    $('version').textContent = `powerplan ${s.service.version}`;
    replace($('system'), systemView(s));
  });

const loadActive = () =>
  section($('active'), 'the active plan', async () => {
    state.active = await api('GET', '/v1/plans/active');
    replace($('active'), ...activeView(state.active));
  });

const loadPlans = () =>
  section($('plans'), 'the plans', async () => {
    const list = await api('GET', '/v1/plans');
    const a = state.active;
    const reasons = [];
    if (!may('control')) reasons.push('Switching plans needs a token with the control scope.');
    else if (a && !a.canSet)
      reasons.push(`Plans cannot be switched here: ${a.cannotSetReason ?? 'the backend cannot set them.'}`);
    else if (state.system && !state.system.backend.capabilities.setPlan)
      reasons.push('This backend cannot set the plan.');
    if (a?.policyManaged)
      reasons.push('A policy manages the plan here: a switch is reverted at its next refresh.');
    $('plans-note').hidden = reasons.length === 0;
    $('plans-note').textContent = reasons.join(' ');
    const canSwitch = may('control') && a?.canSet && state.system?.backend.capabilities.setPlan !== false;
    replace($('plans'), ...plansView(list, canSwitch ? previewSwitch : undefined));
  });

const loadHolds = () =>
  section($('holds'), 'the holds', async () => {
    try {
      const l = await api('GET', '/v1/holds');
      $('holds-section').hidden = false;
      replace($('holds'), ...holdsView(l));
    } catch (err) {
      // A service without holds has no such route: the section stays hidden.
      if (err instanceof ApiError && err.status === 404) return;
      $('holds-section').hidden = false;
      throw err;
    }
  });

const loadAdvice = () =>
  section($('advice'), 'the recommendation', async () => {
    $('advice').setAttribute('aria-busy', 'true');
    const workload = encodeURIComponent($('advice-workload').value);
    replace($('advice'), adviceView(await api('GET', `/v1/recommendation?workload=${workload}`)));
  });

let shown;
const renderResult = (r) => {
  shown = r;
  const width = $('bench-result').clientWidth;
  replace(
    $('bench-result'),
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
const showResult = async (id) => renderResult(await api('GET', `/v1/benchmarks/${encodeURIComponent(id)}`));

// Charts are drawn for their width: redraw when it changes (a rotated phone, a resized portal frame).
let lastWidth = 0;
new ResizeObserver(() => {
  const width = $('bench-result').clientWidth;
  if (shown && Math.abs(width - lastWidth) > 40) renderResult(shown);
  lastWidth = width;
}).observe($('bench-result'));

const loadHistory = (showLatest) =>
  section($('history'), 'the benchmark history', async () => {
    const list = await api('GET', '/v1/benchmarks?limit=20');
    replace(
      $('history'),
      historyView(list, (id) =>
        section($('bench-result'), `benchmark ${id}`, async () => {
          await showResult(id);
          $('result-h')?.setAttribute('tabindex', '-1');
          $('result-h')?.focus();
        }),
      ),
    );
    if (showLatest && list.benchmarks[0]) await showResult(list.benchmarks[0].id);
  });

// --- switching plans ----------------------------------------------------------------------------

/** Dry run first; the real switch only after the dialog is confirmed. */
const previewSwitch = async (plan, button) => {
  button.disabled = true;
  let preview;
  try {
    preview = await api('PUT', '/v1/plans/active', { plan: plan.id, dryRun: true });
  } catch (err) {
    reportError(`Previewing the switch to ${plan.name}`, err);
    button.disabled = false;
    return;
  }
  confirmSwitch({
    title: `Switch to ${plan.name}?`,
    body: previewView(preview),
    canConfirm: preview.changed,
    opener: button,
    onConfirm: async () => {
      try {
        const r = await api('PUT', '/v1/plans/active', { plan: plan.id });
        $('bench-status').textContent = r.changed
          ? `Switched to ${r.after.name}.`
          : `${r.after.name} was already active.`;
      } catch (err) {
        reportError(`Switching to ${plan.name}`, err);
      }
      await loadActive();
      await Promise.all([loadPlans(), loadHolds(), loadAdvice()]);
      $('active-plan-name')?.setAttribute('tabindex', '-1');
      $('active-plan-name')?.focus();
    },
  });
};

// --- benchmark ----------------------------------------------------------------------------------

const phases = [
  [0, 'Calibrating the unit of work…'],
  [300, 'Timing bursts on a warm core, then after each idle gap…'],
  [3000, 'Measuring sustained single-thread and all-core throughput…'],
  [5000, 'Finishing…'],
];

$('bench-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const button = $('bench-run');
  const profile = $('bench-profile').value;
  const scale = profile === 'standard' ? 4 : 1;
  const started = performance.now();
  button.disabled = true;
  $('bench-form').setAttribute('aria-busy', 'true');
  $('bench-running').hidden = false;
  $('bench-status').textContent = `Running the ${profile} benchmark; the page waits until it is done.`;
  const tick = () => {
    const ms = performance.now() - started;
    $('bench-elapsed').textContent = `${(ms / 1000).toFixed(0)} s elapsed`;
    $('bench-phase').textContent = phases.filter(([at]) => ms >= at * scale).at(-1)[1];
  };
  tick();
  const timer = setInterval(tick, 500);
  try {
    const body = { profile, ...($('bench-force').checked ? { force: true } : {}) };
    const r = await api('POST', '/v1/benchmarks', body);
    $('bench-status').textContent = `Benchmark ${r.id} finished in ${(r.durationMs / 1000).toFixed(1)} s.`;
    await showResult(r.id);
    await Promise.all([loadHistory(false), loadAdvice()]);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const hint =
      err.status === 409 ? ' Tick "Run even if the CPU is busy" to run anyway, or try again later.' : '';
    $('bench-status').textContent = '';
    $('bench-status').append(errorBox('The benchmark did not run', err), hint);
  } finally {
    clearInterval(timer);
    $('bench-running').hidden = true;
    $('bench-form').removeAttribute('aria-busy');
    button.disabled = false;
  }
});

$('advice-workload').addEventListener('change', () => loadAdvice());
$('advice-form').addEventListener('submit', (e) => e.preventDefault());
$('fleet-filter').addEventListener('submit', (e) => e.preventDefault());

// --- start --------------------------------------------------------------------------------------

const start = async () => {
  $('errors').replaceChildren();
  // The caller first: a 401 prompts for the token once, before the other calls run.
  await loadCaller();
  await Promise.all([loadSystem(), loadActive()]);
  $('bench-form').hidden = !may('benchmark');
  $('bench-note').hidden = may('benchmark');
  $('bench-note').textContent = 'Running the benchmark needs a token with the benchmark scope.';
  await Promise.all([
    loadPlans(),
    loadHolds(),
    loadAdvice(),
    loadHistory(true),
    initFleet({ may, reportError }),
  ]);
  if (!state.allows.length) {
    $('errors').append(
      h(
        'p',
        { class: 'callout info' },
        'No token was given. ',
        h('button', { type: 'button', onclick: () => location.reload() }, 'Enter a token'),
      ),
    );
  }
  document.body.dataset.ready = 'true';
};

start();
