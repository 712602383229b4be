/**
 * The product's reading of its damaged state files (lib/keep-aside.ts moves them aside without
 * knowing what they hold): which are restore journals, whose loss may leave a restore owed, what
 * get_active_power_plan warns about while one is kept aside, and the health /healthz reports.
 */
import { dirname, resolve } from 'node:path';
import { onceEach } from '../lib/frozen.ts';
import { type DamagedFile, damagedBeside } from '../lib/keep-aside.ts';
import type { Store } from '../lib/store.ts';
import { JOURNAL } from './restore-journal.ts';

/** The restore journal and the two journals it replaced: damage to one may leave a restore owed. */
export const JOURNAL_FILES: ReadonlySet<string> = new Set([JOURNAL, 'holds.json', 'compare-journal.json']);

export interface DamagedState extends DamagedFile {
  /** True for a restore journal: a restore may be pending; the kept copy names the plan. */
  journal: boolean;
}

export interface StateHealth {
  status: 'ok' | 'degraded';
  damaged: readonly DamagedState[];
}

/** Each listing marked once (listings are frozen and the same array while unchanged, keep-aside.ts). */
const marked = onceEach((files: readonly DamagedFile[]): readonly DamagedState[] =>
  files.map((d) => ({ ...d, journal: JOURNAL_FILES.has(d.file) })),
);

/** The kept copies of damaged files in the state directory, journals marked (deeply frozen). */
export const damagedState = (store: Store): readonly DamagedState[] => marked(store.damaged());

/** The health of one set of damaged files, made once per set. */
const healthOf = onceEach(
  (damaged: readonly DamagedState[]): StateHealth => ({
    status: damaged.length ? 'degraded' : 'ok',
    damaged,
  }),
);

/**
 * Degraded while a kept copy of a damaged state file, or of the token file when it lives in
 * another directory, is present. Deeply frozen, the same object while nothing changed.
 */
export const stateHealth = (store: Store, tokenFile: string | undefined): StateHealth => {
  const own = damagedState(store);
  const beside =
    tokenFile && resolve(dirname(tokenFile)) !== resolve(store.dir) ? marked(damagedBeside(tokenFile)) : [];
  return healthOf(beside.length ? [...own, ...beside] : own);
};

/** What get_active_power_plan and the page say while a damaged restore journal is kept aside. */
export const journalWarnings = (damaged: readonly DamagedState[]): string[] =>
  damaged
    .filter((d) => d.journal)
    .map(
      (d) =>
        `The restore journal ${d.file} was damaged and kept aside as ${d.keptAs} in the state directory: a restore may be pending. ` +
        'Its restorePlanId names the plan that was in force before; set that plan if it is not in force, then remove the kept copy.',
    );
