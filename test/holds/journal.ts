/**
 * Moves the clock past a hold's expiry for whoever reads the journal next, as if the service had
 * been down that long: the expiry is rewritten in the restore journal, atomically as the service writes it.
 * Tests use it instead of waiting out real durations that a loaded machine could overrun.
 */
import assert from 'node:assert/strict';
import type { Store } from '../../src/lib/store.ts';
import { JOURNAL, RestoreJournal } from '../../src/services/restore-journal.ts';

export const expireInJournal = async (store: Store, id: string, at = Date.now() - 1000): Promise<void> => {
  const journal = await store.read(JOURNAL, RestoreJournal);
  assert.ok(journal, 'a hold journal exists');
  assert.ok(
    journal.holds.some((h) => h.id === id),
    `hold ${id} is journaled`,
  );
  await store.write(JOURNAL, {
    ...journal,
    holds: journal.holds.map((h) => (h.id === id ? { ...h, expiresAt: new Date(at).toISOString() } : h)),
  });
};
