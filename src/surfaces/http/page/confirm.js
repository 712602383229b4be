// @ts-check
// The one confirmation of a plan switch (this machine or the fleet): the dry-run preview in the
// dialog, Switch enabled only when something would change, focus back to the opener on cancel.
import { byId, replace } from './dom.js';

/**
 * Shows the preview; runs `onConfirm` only when Switch is pressed. `opener` is re-enabled either way.
 * @param {{
 *   title: string,
 *   body: import('./dom.js').Child[],
 *   canConfirm: boolean,
 *   opener: HTMLButtonElement,
 *   onConfirm: () => Promise<void>,
 * }} options
 */
export const confirmSwitch = ({ title, body, canConfirm, opener, onConfirm }) => {
  const dialog = byId('confirm', HTMLDialogElement);
  byId('confirm-h').textContent = title;
  replace(byId('confirm-body'), ...body);
  byId('confirm-ok', HTMLButtonElement).disabled = !canConfirm;
  dialog.addEventListener(
    'close',
    async () => {
      opener.disabled = false;
      const confirmed = dialog.returnValue === 'confirm';
      dialog.returnValue = '';
      if (!confirmed) {
        opener.focus();
        return;
      }
      await onConfirm();
    },
    { once: true },
  );
  dialog.showModal();
  byId('confirm-cancel').focus();
};
