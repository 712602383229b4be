// @ts-check
// The status page's start: who the caller is first (a 401 prompts for the token once), then every
// section from the REST API in the order its data depends on, and the refresh after a plan switch.
// Each section is a module of its own; this one only wires them together.
import { loadActive } from './active.js';
import { loadAdvice } from './advice.js';
import { initBenchmark } from './benchmark.js';
import { anyScope, loadCaller, may } from './caller.js';
import { byId, h } from './dom.js';
import { reportError } from './errors.js';
import { initFleet } from './fleet.js';
import { loadHistory } from './history.js';
import { loadHolds } from './holds.js';
import { loadPlans } from './plans.js';
import { loadSystem } from './system.js';
import { loadWorkload } from './workload.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['ActivePlan']} ActivePlan */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['SystemInfo']} SystemInfo */

/** What the plans section needs from the others; kept when a reload fails. */
const state = {
  /** @type {ActivePlan | undefined} */
  active: undefined,
  /** @type {SystemInfo | undefined} */
  system: undefined,
};

const refreshActive = async () => {
  state.active = (await loadActive()) ?? state.active;
};

const plans = () => loadPlans({ ...state, onSwitched: afterSwitch });

/** After a plan switch (or a failed one): what it changes, then focus on the plan in force. */
const afterSwitch = async () => {
  await refreshActive();
  await Promise.all([plans(), loadHolds(), loadAdvice()]);
  document.getElementById('active-plan-name')?.setAttribute('tabindex', '-1');
  document.getElementById('active-plan-name')?.focus();
};

const start = async () => {
  byId('errors').replaceChildren();
  await loadCaller();
  await Promise.all([
    loadSystem().then((s) => {
      state.system = s ?? state.system;
    }),
    refreshActive(),
  ]);
  initBenchmark({ onDone: () => Promise.all([loadHistory(false), loadAdvice()]) });
  await Promise.all([
    plans(),
    loadHolds(),
    loadAdvice(),
    loadWorkload(),
    loadHistory(true),
    initFleet({ configured: state.system?.service.fleet ?? true, may, reportError }),
  ]);
  if (!anyScope()) {
    byId('errors').append(
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
