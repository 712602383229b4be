/**
 * The one restore journal, `restore-journal.json`: present exactly while a plan change is owed
 * back. Written before the plan changes, so a crash or SIGKILL at any point leaves it behind and
 * the next start (or the next plan change) restores. A journal is owned either by holds (restore
 * when the last hold ends) or by a comparison (restore when it ends; it holds the plan lock
 * throughout, so a comparison journal found under the lock was left by a dead process).
 *
 * Earlier versions kept two journals: `holds.json` (restorePlanId) and `compare-journal.json`
 * (originalPlanId). They are read once and turned into this one, so an upgrade never loses a
 * pending restore.
 */
import { z } from 'zod';
import { HoldRecord } from '../domain/holds.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';

export const RestoreJournal = z.object({
  version: z.literal(2),
  kind: z.enum(['holds', 'comparison']),
  restorePlanId: z.string(),
  restorePlanName: z.string(),
  createdAt: z.string(),
  /** Caller that started what is owed back (token name, `local`, `service`). */
  createdBy: z.string(),
  /** Holds in force (kind holds); empty for a moment between the last hold's end and the restore. */
  holds: z.array(HoldRecord),
  /** Plans a comparison switches through (kind comparison). */
  planned: z.array(z.string()).optional(),
  /** The last restore error, so a failing restore is audited once rather than at every retry. */
  restoreError: z.string().optional(),
});
export type RestoreJournal = z.infer<typeof RestoreJournal>;

export const JOURNAL = 'restore-journal.json' as const;

/** A new journal owing `plan` back, started now by `createdBy`. */
export const owing = (
  kind: RestoreJournal['kind'],
  plan: { id: string; name: string },
  createdBy: string,
  more: Partial<Pick<RestoreJournal, 'holds' | 'planned' | 'createdAt'>> = {},
): RestoreJournal => ({
  version: 2,
  kind,
  restorePlanId: plan.id,
  restorePlanName: plan.name,
  createdAt: more.createdAt ?? new Date().toISOString(),
  createdBy,
  holds: more.holds ?? [],
  ...(more.planned ? { planned: more.planned } : {}),
});

const LegacyHolds = z.object({
  version: z.literal(1),
  restorePlanId: z.string(),
  restorePlanName: z.string(),
  holds: z.array(HoldRecord),
  restoreError: z.string().optional(),
});

const LegacyCompare = z.object({
  version: z.literal(1),
  startedAt: z.string(),
  caller: z.string(),
  originalPlanId: z.string(),
  originalPlanName: z.string(),
  planned: z.array(z.string()),
});

/**
 * Turns the journals of earlier versions into the one journal (once: they are removed after the
 * new one is written). Holds win over a comparison: a comparison that ran during holds started
 * from the held plan, which recovery puts back anyway.
 */
export const migrateLegacyJournals = async (store: Store, log: Logger): Promise<void> => {
  const holds = await store.read('holds.json', LegacyHolds);
  const compare = await store.read('compare-journal.json', LegacyCompare);
  if (!holds && !compare) return;
  if (await store.read(JOURNAL, RestoreJournal)) {
    log.warn('journals of an earlier version left alone: a restore journal exists already', {
      files: [holds && 'holds.json', compare && 'compare-journal.json'].filter(Boolean),
    });
    return;
  }
  const now = new Date().toISOString();
  const journal: RestoreJournal = holds
    ? {
        version: 2,
        kind: 'holds',
        restorePlanId: holds.restorePlanId,
        restorePlanName: holds.restorePlanName,
        createdAt: holds.holds[0]?.createdAt ?? now,
        createdBy: holds.holds[0]?.createdBy ?? 'service',
        holds: holds.holds,
        ...(holds.restoreError ? { restoreError: holds.restoreError } : {}),
      }
    : {
        version: 2,
        kind: 'comparison',
        restorePlanId: compare!.originalPlanId,
        restorePlanName: compare!.originalPlanName,
        createdAt: compare!.startedAt,
        createdBy: compare!.caller,
        holds: [],
        planned: compare!.planned,
      };
  await store.write(JOURNAL, journal);
  await store.remove('holds.json');
  await store.remove('compare-journal.json');
  log.info('restore journal of an earlier version migrated', {
    kind: journal.kind,
    restorePlanId: journal.restorePlanId,
  });
};
