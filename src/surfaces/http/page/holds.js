// @ts-check
// "Holds": the holds in force (plan, until when, by whom, why) and the plan restored when the last
// one ends, or a pending restore. Hidden on a service without holds.
import { ApiError, api } from './api.js';
import { byId, h, replace, when } from './dom.js';
import { section } from './errors.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['HoldList']} HoldList */

/** @param {HoldList} l */
const holdsView = (l) =>
  l.holds.length
    ? [
        h(
          'ul',
          {},
          l.holds.map((x) =>
            h(
              'li',
              {},
              h('strong', {}, x.planName),
              ` until ${when(x.expiresAt)} (${x.secondsRemaining} s left), by ${x.createdBy}`,
              x.reason ? `: ${x.reason}` : '',
            ),
          ),
        ),
        h(
          'p',
          { class: 'muted' },
          `When the last hold ends, ${l.restorePlanName ?? l.restorePlanId} is restored.`,
        ),
      ]
    : [
        h(
          'p',
          { class: 'muted' },
          l.restorePending
            ? `No holds; restoring ${l.restorePlanName} is pending${l.restoreError ? `: ${l.restoreError}` : ''}.`
            : 'No holds.',
        ),
      ];

export const loadHolds = () =>
  section(byId('holds'), 'the holds', async () => {
    try {
      const l = /** @type {HoldList} */ (await api('GET', '/v1/holds'));
      byId('holds-section').hidden = false;
      replace(byId('holds'), ...holdsView(l));
    } catch (err) {
      // A service without holds has no such route: the section stays hidden.
      if (err instanceof ApiError && err.status === 404) return;
      byId('holds-section').hidden = false;
      throw err;
    }
  });
