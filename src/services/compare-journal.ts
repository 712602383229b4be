/**
 * The restore journal of a plan comparison: written before the first switch, removed after the
 * original plan is back. A journal left behind by a crash or `kill -9` is replayed at the next
 * start (and before the next comparison), so the server always ends up on the plan it had.
 */
import { z } from 'zod';
import type { Deps } from '../deps.ts';
import { PowerPlanError } from '../domain/errors.ts';
import type { Caller } from '../domain/scopes.ts';
import { audit } from '../lib/audit.ts';

export const CompareJournal = z.object({
  version: z.literal(1),
  /** Process that runs the comparison: a live one is still at work, a dead one crashed. */
  pid: z.number().int(),
  startedAt: z.string(),
  caller: z.string(),
  originalPlanId: z.string(),
  originalPlanName: z.string(),
  planned: z.array(z.string()),
});
export type CompareJournal = z.infer<typeof CompareJournal>;

const JOURNAL = 'compare-journal.json' as const;

export const writeJournal = (deps: Pick<Deps, 'store'>, j: CompareJournal): Promise<void> =>
  deps.store.write(JOURNAL, j);

export const readJournal = (deps: Pick<Deps, 'store'>): Promise<CompareJournal | undefined> =>
  deps.store.read(JOURNAL, CompareJournal);

export const removeJournal = (deps: Pick<Deps, 'store'>): Promise<void> => deps.store.remove(JOURNAL);

/** True when `pid` is another process that is still running (EPERM: it exists, owned by someone else). */
export const otherProcessAlive = (pid: number): boolean => {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Puts the journal's original plan back (the caller holds the plan lock), writes the audit line (as
 * the comparison's caller, or as `service` when recovering on its own) and removes the journal. On failure the journal stays, so the next start tries again.
 */
export const replayJournal = async (
  deps: Deps,
  j: CompareJournal,
  why: string,
  caller: Caller | 'service' = 'service',
): Promise<void> => {
  const before = (await deps.backend.getActive()).plan;
  const switchNeeded = before?.id !== j.originalPlanId;
  try {
    if (switchNeeded) await deps.backend.setActive(j.originalPlanId);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    await audit(deps.store, caller, {
      operation: 'compare_restore',
      input: { reason: why, journal: j },
      before,
      after: { id: j.originalPlanId, name: j.originalPlanName },
      result: 'failed',
      error: message,
    });
    throw new PowerPlanError(
      'os_error',
      `Restoring the original plan ${j.originalPlanName} (${j.originalPlanId}) failed: ${message} The restore journal is kept; the next start retries.`,
      undefined,
      { cause: e },
    );
  }
  await audit(deps.store, caller, {
    operation: 'compare_restore',
    input: { reason: why, journal: j, switched: switchNeeded },
    before,
    after: { id: j.originalPlanId, name: j.originalPlanName },
    result: 'restored',
  });
  deps.log.info('comparison restore', { reason: why, planId: j.originalPlanId, switched: switchNeeded });
  await removeJournal(deps);
};

/** The start-up recoverer: replays a journal whose comparison is no longer running. */
export const recoverComparison = async (deps: Deps): Promise<void> => {
  const j = await readJournal(deps);
  if (!j) return;
  if (otherProcessAlive(j.pid)) {
    deps.log.info('a comparison is running in another process; its journal is left alone', { pid: j.pid });
    return;
  }
  await deps.planLock.run('start-up restore of a comparison', () =>
    replayJournal(deps, j, 'journal left behind by an interrupted comparison'),
  );
};
