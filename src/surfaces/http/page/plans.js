// @ts-check
// "Plans": every plan with its kind, and "Switch…" where the caller may switch and the backend can:
// a dry run first, its preview in the confirmation dialog, the real switch only on "Switch". Says
// why there are no switch buttons when there are none.
import { ApiError, api } from './api.js';
import { may } from './caller.js';
import { confirmSwitch } from './confirm.js';
import { byId, facts, h, note, replace } from './dom.js';
import { reportError, section } from './errors.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['Plan']} Plan */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['PlanList']} PlanList */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['SetPlanResult']} SetPlanResult */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['ActivePlan']} ActivePlan */
/** @typedef {import('../../../../openapi/api-types').components['schemas']['SystemInfo']} SystemInfo */

/**
 * The plan list; `onSwitch(plan, button)` is given only when the caller may switch plans here.
 * @param {PlanList} list
 * @param {((plan: Plan, button: HTMLButtonElement) => void) | undefined} onSwitch
 */
const plansView = (list, onSwitch) =>
  list.plans.map((p) => {
    /** @type {HTMLButtonElement | null} */
    const button =
      onSwitch && !p.active
        ? h(
            'button',
            {
              type: 'button',
              class: 'switch',
              'aria-label': `Switch to ${p.name}…`,
              onclick: () => button && onSwitch(p, button),
            },
            'Switch…',
          )
        : null;
    return h(
      'li',
      { class: p.active ? 'plan active' : 'plan', 'data-plan-id': p.id },
      h(
        'span',
        { class: 'plan-title' },
        p.name,
        ' ',
        h('span', { class: `badge kind-${p.kind}` }, p.kind),
        p.active ? h('span', { class: 'badge on' }, 'active') : null,
        p.edited
          ? h(
              'span',
              {
                class: 'badge edited',
                title: (p.differences ?? [])
                  .map((d) => `${d.setting}: ${d.value} (stock ${d.stock})`)
                  .join(', '),
              },
              'edited',
            )
          : null,
      ),
      h('code', { class: 'plan-id' }, p.id),
      button,
    );
  });

/**
 * What a switch would do, from its dry run.
 * @param {SetPlanResult} r
 */
const previewView = (r) => [
  h(
    'p',
    {},
    r.changed ? 'The active plan would change:' : 'This plan is already active; nothing would change.',
  ),
  facts([
    ['From', `${r.before.name} (${r.before.kind})`],
    ['To', `${r.after.name} (${r.after.kind})`],
    ['Plan id', r.after.id],
  ]),
  r.created ? note('info', 'Created first:', 'the plan is not installed and would be created.') : null,
  ...(r.warnings ?? []).map((w) => note('warning', 'Note:', w)),
  h('p', { class: 'muted' }, 'This preview changed nothing (dry run). The change is audited with your name.'),
];

/**
 * Dry run first; the real switch only after the dialog is confirmed, then `onSwitched`.
 * @param {Plan} plan
 * @param {HTMLButtonElement} button
 * @param {() => Promise<void>} onSwitched
 */
const previewSwitch = async (plan, button, onSwitched) => {
  button.disabled = true;
  let preview;
  try {
    preview = /** @type {SetPlanResult} */ (
      await api('PUT', '/v1/plans/active', { plan: plan.id, dryRun: true })
    );
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
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
        const r = /** @type {SetPlanResult} */ (await api('PUT', '/v1/plans/active', { plan: plan.id }));
        const notInForce = r.effective?.mismatches.length ?? 0;
        byId('bench-status').textContent = r.changed
          ? `Switched to ${r.after.name}${notInForce ? `, but ${notInForce} setting(s) did not take effect (see Active plan)` : ''}.`
          : `${r.after.name} was already active.`;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        reportError(`Switching to ${plan.name}`, err);
      }
      await onSwitched();
    },
  });
};

/**
 * Loads the plans and offers the switch where the caller may and the backend can.
 * @param {{ active: ActivePlan | undefined, system: SystemInfo | undefined, onSwitched: () => Promise<void> }} context
 */
export const loadPlans = ({ active: a, system, onSwitched }) =>
  section(byId('plans'), 'the plans', async () => {
    const list = /** @type {PlanList} */ (await api('GET', '/v1/plans'));
    const reasons = [];
    if (!may('control')) reasons.push('Switching plans needs a token with the control scope.');
    else if (a && !a.canSet)
      reasons.push(`Plans cannot be switched here: ${a.cannotSetReason ?? 'the backend cannot set them.'}`);
    else if (system && !system.backend.capabilities.setPlan)
      reasons.push('This backend cannot set the plan.');
    if (a?.policyManaged)
      reasons.push('A policy manages the plan here: a switch is reverted at its next refresh.');
    const why = byId('plans-note');
    why.hidden = reasons.length === 0;
    why.textContent = reasons.join(' ');
    const canSwitch = may('control') && a?.canSet && system?.backend.capabilities.setPlan !== false;
    replace(
      byId('plans'),
      ...plansView(list, canSwitch ? (plan, button) => previewSwitch(plan, button, onSwitched) : undefined),
    );
  });
