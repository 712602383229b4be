/**
 * The product as perf/workload.ts uses it: `powerplan serve` as its own process (its own state
 * directory, a loopback port), asked over REST with the local administrator token for its
 * benchmark (POST /v1/benchmarks) and its estimate of what the plan costs the work observed
 * (GET /v1/workload: without a window, the counters are compared with the previous read, so two
 * reads bracket exactly the run between them).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { binPath } from '../../scripts/lib/serve.mjs';
import { type ServerProcess, startProcess } from './processes.ts';

export interface WorkloadRead {
  observation: {
    windowSeconds: number;
    busyShare: number | null;
    idleEntriesPerSecond: number | null;
    meanIdlePeriodUs: number | null;
    meanBusyPeriodUs?: number | null;
    [k: string]: unknown;
  };
  estimate: null | {
    addedPercent: number;
    low: number;
    high: number;
    addedUsPerWakeup: number;
    basis: string;
    benchmarkId?: string;
    /** The performance plan's benchmark the platform's share was taken from. */
    recoverableFrom?: string;
    [k: string]: unknown;
  };
  reason?: string | null;
}

export interface Product {
  pid: number;
  url: string;
  benchmark(body: Record<string, unknown>): Promise<{ id: string; summary: { headline?: string } }>;
  /** The product's estimate against its previous read; `cpus` restricts it to those CPUs (a cpu list). */
  workload(cpus?: string): Promise<WorkloadRead>;
  /** Sets the plan in force (the simulated backend's plans by kind: high-performance, balanced, power-saver). */
  setPlan(plan: string): Promise<void>;
  stop(): Promise<void>;
}

export const startProduct = async (o: {
  stateDir: string;
  port: number;
  backend: string;
}): Promise<Product> => {
  const server: ServerProcess = await startProcess(
    [binPath, 'serve', '--port', String(o.port), '--backend', o.backend, '--state-dir', o.stateDir],
    { POWERPLAN_LOG_LEVEL: 'warn' },
  );
  const token = (await readFile(join(o.stateDir, 'admin.token'), 'utf8')).trim();
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const r = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(300_000),
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 500)}`);
    return JSON.parse(text) as T;
  };
  return {
    pid: server.child.pid ?? 0,
    url: server.url,
    benchmark: (body) => call('POST', '/v1/benchmarks', body),
    workload: (cpus) =>
      call<WorkloadRead>(
        'GET',
        `/v1/workload${cpus === undefined ? '' : `?cpus=${encodeURIComponent(cpus)}`}`,
      ),
    setPlan: async (plan) => {
      await call('PUT', '/v1/plans/active', { plan });
    },
    stop: async () => {
      await server.stop();
    },
  };
};
