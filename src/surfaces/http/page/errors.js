// @ts-check
// How a failure is shown: in the section that failed and in the alert region at the top, with the
// problem's detail, its status and code; never swallowed, never retried silently.
import { ApiError } from './api.js';
import { byId, h, replace } from './dom.js';

/**
 * A failure with the problem's detail, its status and code.
 * @param {string} what
 * @param {{ message: string, status?: number, code?: string | undefined }} err
 */
export const errorBox = (what, err) =>
  h(
    'p',
    { class: 'callout error' },
    h('strong', {}, `${what}: `),
    err.message,
    err.status
      ? h('span', { class: 'muted' }, ` (HTTP ${err.status}${err.code ? `, ${err.code}` : ''})`)
      : null,
  );

/**
 * Adds an error to the alert region at the top, with a button to dismiss it.
 * @param {string} what
 * @param {ApiError} err
 */
export const reportError = (what, err) => {
  const box = errorBox(what, err);
  box.append(' ', h('button', { type: 'button', class: 'link', onclick: () => box.remove() }, 'Dismiss'));
  byId('errors').append(box);
};

/**
 * Runs one section's loader; an API failure is shown in `target` and at the top. Anything else is a
 * bug of the page and is thrown on.
 * @param {Element | null} target
 * @param {string} what
 * @param {() => Promise<unknown>} load
 */
export const section = async (target, what, load) => {
  try {
    await load();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (target) replace(target, errorBox(`Could not load ${what}`, err));
    reportError(`Loading ${what}`, err);
  }
};
