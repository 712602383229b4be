/**
 * The benchmark as a service of one instance: one run at a time (in this process and, through a
 * lock file, on this host), a busy guard that protects a loaded production machine, a hard cap,
 * cancellation, and the history. The environment fingerprint (plan, backend, virtualization) is
 * handed in as data, so this module never talks to the platform layer.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism, cpus, platform, release } from 'node:os';
import { join } from 'node:path';
import {
  type BenchmarkEnvironment,
  type BenchmarkList,
  type BenchmarkProfile,
  type BenchmarkResult,
  benchmarkIdPattern,
} from '../domain/benchmark.ts';
import { PowerPlanError } from '../domain/errors.ts';
import type { ActivePlan, BackendName, Virtualization } from '../domain/schemas.ts';
import { FileLock } from '../lib/file-lock.ts';
import type { Logger } from '../lib/log.ts';
import { type LinkedSignal, linkedSignal } from '../lib/signal.ts';
import type { Store } from '../lib/store.ts';
import { analyze, headline, wakeUpCostUs } from './analysis.ts';
import { type CpuLoad, sampleCpuLoad } from './cpu-load.ts';
import { BenchmarkHistory, type HistoryLimits } from './history.ts';
import { benchPlan, capMs } from './profiles.ts';
import { liveWorkers, type RunProgress, runBenchmark } from './runner.ts';

export const MAX_THREADS = 256;

/** What the caller knows about the platform; measured by the operation, passed in as data. */
export interface Fingerprint {
  activePlan: ActivePlan | null;
  backend: BackendName;
  virtualization: Virtualization | null;
}

export interface RunRequest {
  profile?: BenchmarkProfile;
  /** Threads of the all-core phase; default: the logical CPU count. */
  threads?: number;
  /** Run even when the CPU is already busy. */
  force?: boolean;
  /** Replaces the profile's idle gap ladder (ms). */
  idleGapsMs?: number[];
  /** Replaces the profile's number of runs of the ladder. */
  repetitions?: number;
}

export interface RunOptions {
  signal?: AbortSignal;
  progress?: (p: RunProgress) => void;
  /** Read after the busy guard passed, before the first timed phase. */
  fingerprint: () => Promise<Fingerprint>;
}

export interface BenchmarkServiceOptions {
  store: Store;
  log?: Logger;
  /** Average CPU busy % above which a run is refused without `force` (default 30). */
  busyThresholdPercent?: number;
  /** Samples the CPU load before a run; replaceable so the guard can be tested. */
  sampleLoad?: (signal: AbortSignal) => Promise<CpuLoad>;
  history?: Partial<HistoryLimits>;
  /** Aborted when the service shuts down: a run in progress is cancelled and no new one starts. */
  shutdown?: AbortSignal;
}

const newId = (at: Date): string => {
  const iso = at.toISOString(); // 2025-01-01T12:00:00.000Z
  return `bm-${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${randomBytes(3).toString('hex')}`;
};

const environmentWarnings = (
  env: BenchmarkEnvironment,
  threads: number,
  forced: boolean,
  threshold: number,
) => {
  const w: string[] = [];
  if (env.virtualization?.detected) {
    w.push(
      `This is a virtual machine (${env.virtualization.kind ?? 'unknown hypervisor'}): the host's power policy decides the clock, and other guests share the CPUs, so the guest's plan may change little and figures vary between runs.`,
    );
  }
  if (threads > env.cpu.logicalCpus) {
    w.push(
      `${threads} threads on ${env.cpu.logicalCpus} logical CPUs: the all-core phase measures time-sharing, not more cores.`,
    );
  }
  if (env.loadBefore.cpuBusyPercent > threshold) {
    w.push(
      `The CPU was ${env.loadBefore.cpuBusyPercent}% busy before the run${forced ? ' (forced)' : ''}: the figures are lower than on an idle machine and the run competed with that work.`,
    );
  }
  return w;
};

export class BenchmarkService {
  private readonly history: BenchmarkHistory;
  private readonly hostLock: FileLock;
  private readonly log: Logger | undefined;
  private readonly threshold: number;
  private readonly sampleLoad: (signal: AbortSignal) => Promise<CpuLoad>;
  private readonly shutdown: AbortSignal | undefined;
  private current: { link: LinkedSignal; done: Promise<unknown>; what: string } | undefined;

  constructor(options: BenchmarkServiceOptions) {
    this.history = new BenchmarkHistory(options.store, options.history);
    this.hostLock = new FileLock(join(options.store.dir, 'benchmark.lock'), {
      code: 'busy',
      heldMessage: (h) =>
        `A benchmark is already running on this host (${h.what}, process ${h.pid || 'starting'}, started ${h.startedAt}); try again when it has finished.`,
    });
    this.log = options.log;
    this.threshold = options.busyThresholdPercent ?? 30;
    this.sampleLoad = options.sampleLoad ?? ((signal) => sampleCpuLoad(200, signal));
    this.shutdown = options.shutdown;
    this.shutdown?.addEventListener('abort', () => void this.close(), { once: true });
  }

  /** True while a run of this instance is in progress. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** Benchmark worker threads alive in this process (0 when no run is in progress). */
  get activeWorkers(): number {
    return liveWorkers();
  }

  run(request: RunRequest, options: RunOptions): Promise<BenchmarkResult> {
    if (this.shutdown?.aborted) {
      return Promise.reject(
        new PowerPlanError('busy', 'The service is shutting down; no benchmark can start now.'),
      );
    }
    // Checked and set before any await, so two requests arriving together cannot both start.
    if (this.current) {
      return Promise.reject(
        new PowerPlanError(
          'busy',
          `A benchmark is already running (${this.current.what}); wait for it to finish, it takes a few seconds.`,
        ),
      );
    }
    const link = linkedSignal([options.signal]);
    const profile = request.profile ?? 'quick';
    const what = `${profile} profile, started ${new Date().toISOString()}`;
    const done = this.execute(request, profile, options, link.signal, what).finally(() => {
      link.release();
      this.current = undefined;
    });
    this.current = { link, done: done.catch(() => undefined), what };
    return done;
  }

  private async execute(
    request: RunRequest,
    profile: BenchmarkProfile,
    options: RunOptions,
    signal: AbortSignal,
    what: string,
  ): Promise<BenchmarkResult> {
    const threads = request.threads ?? availableParallelism();
    if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
      throw new PowerPlanError('invalid_input', `threads must be an integer from 1 to ${MAX_THREADS}.`);
    }
    const unlock = await this.hostLock.acquire(what);
    try {
      const load = await this.sampleLoad(signal).catch((e) => {
        throw signal.aborted ? new PowerPlanError('cancelled', 'The benchmark was cancelled.') : e;
      });
      const forced = request.force ?? false;
      if (load.busyPercent > this.threshold && !forced) {
        throw new PowerPlanError(
          'busy',
          `The CPU is already ${load.busyPercent}% busy (above ${this.threshold}%): a benchmark now would slow that work down and measure noise. Try again when the machine is quieter, or repeat with force: true (CLI: --force) to run anyway.`,
          { cpuBusyPercent: load.busyPercent, thresholdPercent: this.threshold },
        );
      }
      const fp = await options.fingerprint();
      const environment: BenchmarkEnvironment = {
        activePlan: fp.activePlan,
        backend: fp.backend,
        virtualization: fp.virtualization,
        os: `${platform() === 'win32' ? 'windows' : platform()} ${release()}`,
        cpu: { model: cpus()[0]?.model.trim() || 'unknown', logicalCpus: availableParallelism() },
        loadBefore: {
          cpuBusyPercent: load.busyPercent,
          maxCpuBusyPercent: load.maxBusyPercent,
          loadAverage: load.loadAverage,
        },
        node: process.version,
      };
      const plan = benchPlan(profile, threads, request.idleGapsMs, request.repetitions);
      const cap = capMs(plan);
      const started = new Date();
      const t0 = performance.now();
      this.log?.info('benchmark started', { profile, threads, cap });
      const raw = await runBenchmark(plan, {
        capMs: cap,
        signal,
        ...(options.progress ? { progress: options.progress } : {}),
      });
      const durationMs = Math.round(performance.now() - t0);
      const finished = new Date();
      const analysis = analyze(raw);
      const { phases } = analysis;
      const warnings = [
        ...environmentWarnings(environment, threads, forced, this.threshold),
        ...analysis.warnings,
      ];
      if (
        threads > 1 &&
        threads <= environment.cpu.logicalCpus &&
        phases.sustainedAllCore.scalingEfficiency.value < 0.6
      ) {
        warnings.push(
          `All-core throughput scaled only ${phases.sustainedAllCore.speedup.value}x on ${threads} threads: the CPUs are shared or capped (hypervisor, container quota or other load).`,
        );
      }
      const id = newId(started);
      const longest = phases.burstsAfterIdle[phases.burstsAfterIdle.length - 1];
      const p = environment.activePlan?.plan;
      const result: BenchmarkResult = {
        id,
        startedAt: started.toISOString(),
        finishedAt: finished.toISOString(),
        durationMs,
        capMs: cap,
        profile,
        threads,
        idleGapsMs: plan.idleGapsMs,
        repetitions: plan.repetitions,
        forced,
        environment,
        phases,
        summary: {
          id,
          startedAt: started.toISOString(),
          durationMs,
          profile,
          threads,
          plan: p ? `${p.name} (${p.id})` : null,
          backend: environment.backend,
          singleThreadMops: phases.sustainedSingle.throughput.value,
          allCoreMops: phases.sustainedAllCore.throughput.value,
          burstPenaltyPercent: longest?.penaltyPercent.value ?? 0,
          noisy: analysis.noisy,
          ...(phases.wakeUp ? { wakeUpUs: wakeUpCostUs(phases.wakeUp) } : {}),
          headline: headline(phases),
        },
        warnings,
      };
      await this.history.add(result);
      this.log?.info('benchmark finished', { id, durationMs });
      return result;
    } finally {
      await unlock();
    }
  }

  /** Stored results, newest first, as summaries. */
  async list(limit = 100): Promise<BenchmarkList> {
    const all = await this.history.all();
    return { total: all.length, benchmarks: all.slice(0, limit).map((r) => r.summary) };
  }

  /** The newest stored result, for /metrics; cheap while the history is unchanged. */
  latest(): Promise<BenchmarkResult | undefined> {
    return this.history.latest();
  }

  async get(id: string): Promise<BenchmarkResult> {
    const found = benchmarkIdPattern.test(id) ? await this.history.get(id) : undefined;
    if (!found) {
      throw new PowerPlanError(
        'not_found',
        `No benchmark result '${id}'; list_benchmarks (GET /v1/benchmarks) shows the stored ones.`,
      );
    }
    return found;
  }

  /** Stops a run in progress (shutdown) and waits until its workers are gone. */
  async close(): Promise<void> {
    const c = this.current;
    if (!c) return;
    c.link.abort(
      new PowerPlanError('cancelled', 'The benchmark was stopped because the service is shutting down.'),
    );
    await c.done;
  }
}
