/**
 * The long-lived dependencies of one service instance, built once in `buildDeps` and handed to
 * every operation as part of its context. Surfaces never build these themselves. The services
 * with timers (holds, desired state) are started by the server with `startServices` and stopped
 * through `deps.shutdown`.
 */

import { BenchmarkService } from './bench/service.ts';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './lib/log.ts';
import { Schedule } from './lib/schedule.ts';
import { Store } from './lib/store.ts';
import type { PowerBackend } from './platform/backend.ts';
import { createBackend } from './platform/detect.ts';
import { ComparisonService } from './services/compare.ts';
import { DesiredService } from './services/desired.ts';
import { HoldsService } from './services/holds.ts';
import { PlanChangeService } from './services/plan-change.ts';

export interface Deps {
  config: Config;
  store: Store;
  backend: PowerBackend;
  log: Logger;
  /** The one path of every plan change: plan lock, switch, read-back, audit, restore journal. */
  planChange: PlanChangeService;
  holds: HoldsService;
  desired: DesiredService;
  comparisons: ComparisonService;
  /** Aborted when the service shuts down: running work is cancelled and timers stop. */
  shutdown: AbortController;
  /** The CPU benchmark: one run at a time, its history in the state directory. */
  bench: BenchmarkService;
}

export const buildDeps = (config: Config, overrides: Partial<Deps> = {}): Deps => {
  const log = overrides.log ?? createLogger(config.logLevel);
  const store =
    overrides.store ??
    new Store(config.stateDir, {
      log,
      rotation: { maxBytes: config.auditMaxBytes, files: config.auditFiles },
    });
  const shutdown = overrides.shutdown ?? new AbortController();
  const backend = overrides.backend ?? createBackend(config, store);
  const planChange = overrides.planChange ?? new PlanChangeService({ store, backend, log, config });
  // One timer for the background work of the service (hold expiry, desired-state checks).
  const schedule = new Schedule();
  const holds = overrides.holds ?? new HoldsService({ planChange, backend, log, store, schedule });
  const desired =
    overrides.desired ?? new DesiredService({ store, backend, log, config, planChange, holds, schedule });
  const comparisons = overrides.comparisons ?? new ComparisonService();
  shutdown.signal.addEventListener(
    'abort',
    () => {
      holds.stop();
      desired.stop();
      schedule.stop();
    },
    { once: true },
  );
  return {
    config,
    store,
    log,
    backend,
    planChange,
    holds,
    desired,
    comparisons,
    shutdown,
    bench: overrides.bench ?? new BenchmarkService({ store, log, shutdown: shutdown.signal }),
  };
};

/** The timers of a long-running server (hold expiry, desired-state checks); stopped by `shutdown`. */
export const startServices = (deps: Deps): void => {
  if (deps.shutdown.signal.aborted) return;
  deps.holds.start();
  deps.desired.start();
};
