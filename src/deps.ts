/**
 * The long-lived dependencies of one service instance, built once in `buildDeps` and handed to
 * every operation as part of its context. Surfaces never build these themselves, and their whole
 * lifecycle is `deps.start()` and `deps.stop()`: a surface calls these and nothing else.
 */

import { BenchmarkService } from './bench/service.ts';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './lib/log.ts';
import { Schedule } from './lib/schedule.ts';
import { Store } from './lib/store.ts';
import { removeLeftovers } from './lib/temp-files.ts';
import type { PowerBackend } from './platform/backend.ts';
import { createBackend, createIdleReader } from './platform/detect.ts';
import { ComparisonService } from './services/compare.ts';
import { DesiredService } from './services/desired.ts';
import { FleetService } from './services/fleet/fleet.ts';
import { HoldsService } from './services/holds.ts';
import { PlanChangeService } from './services/plan-change.ts';
import { StatusService } from './services/status.ts';
import { WorkloadService } from './services/workload.ts';

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
  /** The fan-out to other agents (its connections closed by `stop`). */
  fleet: FleetService;
  /** The status read model behind /metrics, /healthz and the MCP status resource. */
  status: StatusService;
  /** The live idle pattern and what the plan costs it (get_workload_cost, the status). */
  workload: WorkloadService;
  /**
   * Starts the service. With `serve` (the listen of a long-running server): the temporary files
   * a crash left are removed, what a dead process left is settled (start-up recovery), `serve`
   * runs, then the timers start (hold expiry, desired-state checks). A one-shot command (the CLI,
   * MCP on stdio) starts nothing: each change settles what is owed under the plan lock anyway.
   */
  start(options?: { serve?: () => Promise<void> }): Promise<void>;
  /**
   * Stops the service (once; later calls wait for the first): aborts running work with `reason`,
   * stops the timers, waits for comparisons to restore their plan and for the plan change in
   * flight, closes the fleet's connections.
   */
  stop(reason?: unknown): Promise<void>;
}

/** How long `stop` waits for a plan change of this process still in flight. */
const STOP_WAIT_MS = 30_000;

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
  const holds =
    overrides.holds ?? new HoldsService({ planChange, log, store, schedule, maxHolds: config.maxHolds });
  const desired =
    overrides.desired ?? new DesiredService({ store, backend, log, config, planChange, holds, schedule });
  const comparisons = overrides.comparisons ?? new ComparisonService();
  const fleet = overrides.fleet ?? new FleetService(config, log);
  const bench = overrides.bench ?? new BenchmarkService({ store, log, shutdown: shutdown.signal });
  const workload =
    overrides.workload ?? new WorkloadService({ reader: createIdleReader(config), backend, bench });
  const status =
    overrides.status ??
    new StatusService({
      config,
      store,
      backend,
      bench,
      holds,
      desired,
      planChange,
      workload,
      log,
    });
  shutdown.signal.addEventListener(
    'abort',
    () => {
      holds.stop();
      void desired.stop();
      schedule.stop();
    },
    { once: true },
  );
  let stopping: Promise<void> | undefined;
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
    fleet,
    bench,
    status,
    workload,
    start: async ({ serve } = {}) => {
      if (!serve || shutdown.signal.aborted) return;
      const removed = removeLeftovers(config.stateDir);
      if (removed.length)
        log.info('temporary files left by an interrupted write removed', { files: removed });
      await planChange.recover();
      await serve();
      if (shutdown.signal.aborted) return;
      holds.start();
      desired.start();
    },
    stop: (reason = new Error('shutting down')) => {
      stopping ??= (async () => {
        shutdown.abort(reason);
        // A cancelled comparison puts its original plan back first; a change in flight finishes.
        await Promise.all([comparisons.settled(), desired.stop()]);
        await planChange.lock.idle(STOP_WAIT_MS);
        await planChange.flushRefusals();
        fleet.close();
      })();
      return stopping;
    },
  };
};
