/**
 * The status read model: what the service knows about this host in one read, gathered here for
 * every surface that reports it (/metrics, /healthz, the MCP status resource); the transports
 * only render it. The plan in force as get_active_power_plan answers it (settings, idle states,
 * who controls the processor, the read-back of the last switch, the desired state), the latest
 * benchmark, the advice for the database workload, plan changes counted from the audit log, the
 * holds, the desired-state checker's counts and the damaged state files.
 *
 * A read happens when someone asks (a scrape, a resource read), never on a timer, and reuses
 * what is dear: the audit log is counted on from where the last read stopped, the advice is
 * worked out again only when the plan or the latest benchmark changed (or after a minute), state
 * files and the damaged-file listing are stat-cached by the store. A part that fails is carried
 * as its error, so one failing read never hides the others.
 */
import type { BenchmarkService } from '../bench/service.ts';
import type { Config } from '../config.ts';
import type { Recommendation } from '../domain/advice.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import { errorMessage } from '../domain/errors.ts';
import type { ActivePlan } from '../domain/schemas.ts';
import { AuditChangeCounter } from '../lib/audit-log.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from '../platform/backend.ts';
import type { DesiredService } from './desired.ts';
import type { HoldsService } from './holds.ts';
import type { PlanChangeService } from './plan-change.ts';
import { activePlan } from './plans.ts';
import { advise } from './recommendation.ts';
import { type DamagedState, damagedState, type StateHealth, stateHealth } from './state-health.ts';
import type { WorkloadRead, WorkloadService } from './workload.ts';

/** One part of the status: its value, or the error that reading it met. */
export type Part<T> =
  | { ok: true; value: T; error?: undefined }
  | { ok: false; value?: undefined; error: unknown };

export type HoldsSummary = Awaited<ReturnType<HoldsService['snapshot']>>;

export interface Status {
  /** The power backend's name (simulated, windows, tuned, ...). */
  backend: string;
  /** The plan in force, as get_active_power_plan answers it. */
  active: Part<ActivePlan>;
  /** The newest stored benchmark result (undefined: none stored). */
  benchmark: Part<BenchmarkResult | undefined>;
  /** The advice for the database workload from the latest benchmark, as get_recommendation gives by default. */
  advice: Part<Recommendation>;
  /** Changes of the active plan recorded in the audit log, by any process. */
  planChanges: Part<number>;
  /** Attempts to change a plan that this process refused (audited one by one or summed up). */
  refusedChanges: number;
  holds: Part<HoldsSummary>;
  /** The desired-state checker of this process: drifts counted, the last check's verdict and plan. */
  desired: { driftTotal: number; inDesiredState: boolean | null; planId: string | null };
  /** The workload's idle pattern since the previous status read and what the plan costs it; null without idle counters. */
  workload: Part<WorkloadRead> | null;
  /** Kept copies of damaged files in the state directory (by any process, until removed). */
  damaged: readonly DamagedState[];
  /** Damaged files this process has moved aside since it started. */
  keptAsideTotal: number;
}

export interface StatusSources {
  config: Pick<Config, 'tokenFile'>;
  store: Store;
  backend: PowerBackend;
  bench: BenchmarkService;
  holds: HoldsService;
  desired: DesiredService;
  planChange: PlanChangeService;
  workload: WorkloadService;
  log: Logger;
}

/** The advice is worked out again at most this often while the plan and the latest benchmark stay the same. */
const ADVICE_TTL_MS = 60_000;

export class StatusService {
  readonly #s: StatusSources;
  readonly #audit: AuditChangeCounter;
  #advice: { key: string; at: number; value: Promise<Part<Recommendation>> } | undefined;

  constructor(sources: StatusSources) {
    this.#s = sources;
    this.#audit = new AuditChangeCounter(sources.store.audit.files());
  }

  /** /healthz: damaged state files only, cheap enough for every probe (no backend read). */
  health(): StateHealth {
    return stateHealth(this.#s.store, this.#s.config.tokenFile);
  }

  /** The whole status, each part read once. */
  async read(): Promise<Status> {
    const s = this.#s;
    const [active, benchmark, planChanges, holds] = await Promise.all([
      this.#part(activePlan(s), 'reading the active plan'),
      this.#part(s.bench.latest(), 'reading the benchmark history'),
      this.#part(this.#audit.total(), 'reading the audit log'),
      this.#part(s.holds.snapshot(), 'reading the hold journal'),
    ]);
    const { driftTotal, inDesiredState, planId } = s.desired;
    return {
      backend: s.backend.name,
      active,
      benchmark,
      // Without the plan in force there is nothing to advise on, for the same reason.
      advice: active.ok ? await this.#adviceFor(active.value, benchmark.value) : active,
      workload: !s.workload.available
        ? null
        : active.ok
          ? await this.#part(
              s.workload.read({
                consumer: 'status',
                active: active.value,
                // The history was read above: the same newest benchmark, not a second read.
                ...(benchmark.ok ? { latestBenchmarkId: benchmark.value?.id ?? null } : {}),
              }),
              'observing the workload',
            )
          : active,
      planChanges,
      refusedChanges: s.planChange.refusals.refused,
      holds,
      desired: { driftTotal, inDesiredState, planId },
      damaged: damagedState(s.store),
      keptAsideTotal: s.store.keptAsideTotal,
    };
  }

  #part<T>(read: Promise<T>, what: string): Promise<Part<T>> {
    return read.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => {
        this.#s.log.warn(`status: ${what} failed`, { error: errorMessage(error) });
        return { ok: false as const, error };
      },
    );
  }

  /** The advice reads plans, facts and stored benchmarks: once per plan and benchmark, not per read. */
  #adviceFor(active: ActivePlan, benchmark: BenchmarkResult | undefined): Promise<Part<Recommendation>> {
    const key = `${active.plan?.id ?? ''}\n${benchmark?.id ?? ''}`;
    const cached = this.#advice;
    if (cached && cached.key === key && Date.now() - cached.at <= ADVICE_TTL_MS) return cached.value;
    const { backend, bench } = this.#s;
    const value = this.#part(
      advise({ backend, bench }, { workload: 'database', benchmark: 'latest' }),
      'the recommendation',
    ).then((p) => {
      // A failure is not kept: the next read tries again.
      if (!p.ok && this.#advice?.value === value) this.#advice = undefined;
      return p;
    });
    this.#advice = { key, at: Date.now(), value };
    return value;
  }
}
