/**
 * Start-up recovery: before the service accepts requests, finish what a crash or `kill -9` left
 * half done (restore the plan a comparison or an ended hold had changed). Each feature that keeps
 * a restore journal adds its recoverer to the list below.
 */
import type { Deps } from '../deps.ts';
import { recoverComparison } from './compare-journal.ts';
import { recoverHolds } from './holds.ts';

export type Recoverer = (deps: Deps) => Promise<void>;

const recoverers: Recoverer[] = [recoverHolds, recoverComparison];

export const recover = async (deps: Deps): Promise<void> => {
  for (const r of recoverers) {
    try {
      await r(deps);
    } catch (e) {
      deps.log.error('start-up recovery failed', { error: e instanceof Error ? e.message : String(e) });
    }
  }
};
