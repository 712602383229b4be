/**
 * get_workload_cost's work: read the idle counters, take the deltas (over an asked window, or
 * against the previous read of the same consumer: a request, a status read), find the plan's
 * measured costs (the newest recent benchmark under the plan in force; one under a performance
 * plan for what it would recover) and apply the model. No timer of its own: a window waits inside
 * the request that asked for it, and reports progress once a second while it does.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { PlanCosts } from '../advice/plan-losses.ts';
import { estimateWorkloadCost } from '../advice/workload-cost.ts';
import { costsFromBenchmark, publishedCosts } from '../advice/workload-costs.ts';
import type { BenchmarkService } from '../bench/service.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import { formatCpuList } from '../domain/cpu-list.ts';
import { PowerPlanError } from '../domain/errors.ts';
import type { ActivePlan } from '../domain/schemas.ts';
import type {
  IdleCounterReader,
  IdleSnapshot,
  WorkloadCost,
  WorkloadObservation,
} from '../domain/workload.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { observe } from '../platform/idle-delta.ts';
import { workloadSummary } from './workload-text.ts';

/** Who reads: each keeps its own previous read, so a scrape's window is not cut short by a request. */
export type WorkloadConsumer = 'request' | 'status' | 'advice';

export interface WorkloadOptions {
  windowS?: number;
  /** The CPUs to observe (ascending, each once); all when absent. */
  cpus?: readonly number[];
  consumer: WorkloadConsumer;
  signal?: AbortSignal;
  progress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** The plan in force, when the caller has read it already. */
  active?: ActivePlan;
  /** The newest stored benchmark's id (null: none), when the caller has read it already. */
  latestBenchmarkId?: string | null;
}

/** A stored benchmark older than this no longer speaks for the machine as it is now. */
const RECENT_MS = 24 * 60 * 60 * 1000;
/** How many stored results are searched. */
const SEARCH = 20;
/** The costs are looked up again at most this often while the plan and the newest benchmark stay. */
const COSTS_TTL_MS = 60_000;

const PERFORMANCE_KINDS = new Set(['high-performance', 'ultimate-performance']);

export interface WorkloadSources {
  reader: IdleCounterReader | null;
  backend: Pick<PowerBackend, 'getActive'>;
  bench: Pick<BenchmarkService, 'list' | 'get'>;
}

/** One read with the raw counters it took (for /metrics, which exports them as counters). */
export interface WorkloadRead {
  cost: WorkloadCost;
  counters: IdleSnapshot;
}

interface FoundCosts {
  costs: PlanCosts;
  performance?: PlanCosts;
}

/** Refuses CPUs of which the counters know none: an empty observation would read as an idle server. */
const observable = (snap: IdleSnapshot, cpus: readonly number[] | undefined) => {
  if (!cpus) return;
  const present = snap.cpus.map((c) => c.cpu);
  const asked = new Set(cpus);
  if (!present.some((c) => asked.has(c)))
    throw new PowerPlanError(
      'invalid_input',
      `cpus: none of ${formatCpuList(cpus)} is a CPU this system counts; its CPUs are ${formatCpuList(present) || 'none'}`,
    );
};

export class WorkloadService {
  readonly #s: WorkloadSources;
  readonly #previous = new Map<WorkloadConsumer, IdleSnapshot>();
  #costs: { key: string; at: number; value: Promise<FoundCosts> } | undefined;

  constructor(sources: WorkloadSources) {
    this.#s = sources;
  }

  get available(): boolean {
    return this.#s.reader !== null;
  }

  async cost(o: WorkloadOptions): Promise<WorkloadCost> {
    return (await this.read(o)).cost;
  }

  async read(o: WorkloadOptions): Promise<WorkloadRead> {
    const { observation, counters } = await this.#observe(o);
    const active = o.active ?? (await this.#s.backend.getActive());
    const found = await this.#costsFor(active, o.latestBenchmarkId);
    const outcome = estimateWorkloadCost(observation, found.costs, found.performance);
    const plan = active.plan?.name ?? null;
    return {
      cost: { observation, ...outcome, plan, summary: workloadSummary(observation, outcome, plan) },
      counters,
    };
  }

  async #observe(o: WorkloadOptions): Promise<{ observation: WorkloadObservation; counters: IdleSnapshot }> {
    const read = this.#s.reader;
    if (!read)
      throw new PowerPlanError(
        'unsupported',
        'this system offers no idle counters to observe the workload from',
      );
    if (o.windowS === undefined) {
      const cur = await read();
      observable(cur, o.cpus);
      const prev = this.#previous.get(o.consumer) ?? null;
      this.#previous.set(o.consumer, cur);
      return { observation: observe(prev, cur, prev ? 'previous-read' : 'boot', o.cpus), counters: cur };
    }
    const first = await read();
    // Refused before the wait, not after it.
    observable(first, o.cpus);
    const started = Date.now();
    const endAt = started + o.windowS * 1000;
    for (let now = started; now < endAt; now = Date.now()) {
      await sleep(Math.min(1000, endAt - now), undefined, o.signal ? { signal: o.signal } : {});
      const done = Math.min(o.windowS, Math.round((Date.now() - started) / 1000));
      o.progress?.({
        progress: done,
        total: o.windowS,
        message: `observing the idle counters: ${done} of ${o.windowS} s`,
      });
    }
    const last = await read();
    this.#previous.set(o.consumer, last);
    return { observation: observe(first, last, 'window', o.cpus), counters: last };
  }

  /** The costs of the plan in force and of a performance plan, looked up once per plan and benchmark. */
  async #costsFor(active: ActivePlan, latestId?: string | null): Promise<FoundCosts> {
    const newest = latestId !== undefined ? latestId : (await this.#s.bench.list(1)).benchmarks[0]?.id;
    const key = `${active.plan?.id ?? ''}\n${newest ?? ''}`;
    const cached = this.#costs;
    if (cached && cached.key === key && Date.now() - cached.at <= COSTS_TTL_MS) return cached.value;
    const value = this.#lookUp(active).catch((e: unknown) => {
      if (this.#costs?.value === value) this.#costs = undefined;
      throw e;
    });
    this.#costs = { key, at: Date.now(), value };
    return value;
  }

  async #lookUp(active: ActivePlan): Promise<FoundCosts> {
    const planId = active.plan?.id;
    const performing = active.plan ? PERFORMANCE_KINDS.has(active.plan.kind) : false;
    let under: BenchmarkResult | undefined;
    let perf: BenchmarkResult | undefined;
    const { benchmarks } = await this.#s.bench.list(SEARCH);
    for (const b of benchmarks) {
      if (Date.now() - Date.parse(b.startedAt) > RECENT_MS || (under && (perf || performing))) break;
      const r = await this.#s.bench.get(b.id);
      const plan = r.environment.activePlan?.plan;
      if (!under && planId !== undefined && plan?.id === planId) under = r;
      if (!perf && !performing && plan && PERFORMANCE_KINDS.has(plan.kind)) perf = r;
    }
    return {
      costs: under ? costsFromBenchmark(under) : publishedCosts(),
      // Under a performance plan already, nothing is left to recover.
      ...(perf
        ? { performance: costsFromBenchmark(perf) }
        : performing && under
          ? { performance: costsFromBenchmark(under) }
          : {}),
    };
  }
}
