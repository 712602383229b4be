/**
 * The long-lived dependencies of one service instance, built once in `buildDeps` and handed to
 * every operation as part of its context. Surfaces never build these themselves.
 */

import { join } from 'node:path';
import { BenchmarkService } from './bench/service.ts';
import type { Config } from './config.ts';
import { FileLock } from './lib/file-lock.ts';
import { Lock } from './lib/lock.ts';
import { createLogger, type Logger } from './lib/log.ts';
import { Store } from './lib/store.ts';
import type { PowerBackend } from './platform/backend.ts';
import { createBackend } from './platform/detect.ts';

export interface Deps {
  config: Config;
  store: Store;
  backend: PowerBackend;
  /** Serialises every change of the active plan: set, compare, holds, restore. */
  planLock: Lock;
  log: Logger;
  /** Aborted when the service shuts down: running work (benchmarks, comparisons) is cancelled. */
  shutdown: AbortController;
  /** The CPU benchmark: one run at a time, its history in the state directory. */
  bench: BenchmarkService;
}

export const buildDeps = (config: Config, overrides: Partial<Deps> = {}): Deps => {
  const store = overrides.store ?? new Store(config.stateDir);
  const log = overrides.log ?? createLogger(config.logLevel);
  const shutdown = overrides.shutdown ?? new AbortController();
  return {
    config,
    store,
    log,
    backend: overrides.backend ?? createBackend(config, store),
    planLock:
      overrides.planLock ??
      new Lock(
        'The power plan',
        new FileLock(join(store.dir, 'plan.lock'), {
          code: 'conflict',
          heldMessage: (h) =>
            `The power plan is being changed by ${h.what} (process ${h.pid || 'starting'}, since ${h.startedAt}); try again when it has finished.`,
        }),
      ),
    shutdown,
    bench: overrides.bench ?? new BenchmarkService({ store, log, shutdown: shutdown.signal }),
  };
};
