// The one confirmation of a plan switch (this machine or the fleet): the dry-run preview in the
// dialog, Switch enabled only when something would change, focus back to the opener on cancel.
import { replace } from './view.js';

const $ = (id) => document.getElementById(id);

/** Shows the preview; runs `onConfirm` only when Switch is pressed. `opener` is re-enabled either way. */
export const confirmSwitch = ({ title, body, canConfirm, opener, onConfirm }) => {
  const dialog = $('confirm');
  $('confirm-h').textContent = title;
  replace($('confirm-body'), ...body);
  $('confirm-ok').disabled = !canConfirm;
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
  $('confirm-cancel').focus();
};
