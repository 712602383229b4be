// @ts-check
// Who the service takes the reader for: the token prompt (a dialog; the token kept in this tab's
// session storage), "Forget token", and the caller's name and scopes in the header, which decide
// the controls every other section offers.
import { api, forgetToken, getToken, onTokenNeeded, setToken } from './api.js';
import { byId } from './dom.js';
import { section } from './errors.js';

/** @typedef {import('../../../../openapi/api-types').components['schemas']['Caller']} Caller */

/** @typedef {Caller['allows'][number]} Scope */

/** @type {Scope[]} */
let allows = [];

/**
 * Whether the caller's token allows this scope (known once `loadCaller` has run).
 * @param {Scope} scope
 */
export const may = (scope) => allows.includes(scope);

/** Whether the service knows the caller with any scope at all. */
export const anyScope = () => allows.length > 0;

/**
 * Shows the token dialog; resolves true when a token was entered (and kept for this tab).
 * @param {string | undefined} message why it is asked for (empty: asked by the reader)
 * @returns {Promise<boolean>}
 */
const promptToken = (message) =>
  new Promise((resolve) => {
    const dialog = byId('token', HTMLDialogElement);
    const input = byId('token-input', HTMLInputElement);
    const opener = document.activeElement;
    byId('token-error').textContent = getToken() ? message || 'The token was refused.' : '';
    input.value = '';
    dialog.addEventListener(
      'close',
      () => {
        const value = input.value.trim();
        const ok = dialog.returnValue === 'ok' && value !== '';
        if (ok) setToken(value);
        dialog.returnValue = '';
        if (opener instanceof HTMLElement) opener.focus();
        resolve(ok);
      },
      { once: true },
    );
    dialog.showModal();
    input.focus();
  });
onTokenNeeded(promptToken);

byId('sign-in').addEventListener('click', async () => {
  if (await promptToken('')) location.reload();
});

byId('forget-token').addEventListener('click', () => {
  forgetToken();
  location.reload();
});

/** Asks who the caller is (a 401 prompts for the token here, before any other call runs). */
export const loadCaller = () =>
  section(null, 'who you are', async () => {
    const me = /** @type {Caller} */ (await api('GET', '/v1/whoami'));
    allows = me.allows;
    byId('whoami').textContent =
      me.name === 'local'
        ? 'Local caller without a token: read only.'
        : me.name === 'local-admin'
          ? 'Signed in with the local administrator credential (control).'
          : `Signed in as ${me.name} (${me.scopes.join(', ')}).`;
    byId('forget-token').hidden = !getToken();
    // Without a token the page only reads; an administrator signs in with a token or admin.token.
    byId('sign-in').hidden = me.name !== 'local' || Boolean(getToken());
  });
