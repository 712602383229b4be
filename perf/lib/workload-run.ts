/**
 * The check of the product's workload estimate against a real database (perf/workload.ts, and its
 * short version in the tests): a throwaway PostgreSQL 15 cluster inside an emulated plan's cgroup,
 * pgbench and a paced pg_restore outside it, and `powerplan serve` outside it too, asked for its
 * estimate before and after each run (the two reads bracket the run) and benchmarked inside the
 * same cgroup under the same emulated plan just before the condition's runs. Conditions are
 * interleaved: every round runs every plan, in a rotated order, and every workload within it.
 * Each run notes the CPU the rest of the machine used meanwhile (busy time outside the server's
 * group and our own processes), so a disturbed run is retried and, at the end, shown as such.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type EmulatedPlan, PLANS, type PlanGroup, planGroup } from './emulation.ts';
import { makeDump, pacedRestore, pgbench } from './pg-load.ts';
import { type Cluster, startCluster } from './postgres.ts';
import { cpuMsOrZero } from './processes.ts';
import { type Product, startProduct, type WorkloadRead } from './product.ts';

export interface Workload {
  name: string;
  /** pgbench: rows of the query and arrivals per second; restore: the paced pg_restore. */
  kind: 'pgbench' | 'restore';
  cpuMs?: number;
  rate?: number;
}

export interface RunOptions {
  temp: string;
  pgPort: number;
  productPort: number;
  backend: string;
  rounds: number;
  seconds: number;
  plans: readonly EmulatedPlan[];
  workloads: readonly Workload[];
  /** Rows of the restore's table, chunk size and storage wait. */
  restore: { rows: number; chunkBytes: number; waitMs: number };
  /** The benchmark's body (the product's own input). */
  benchmark: Record<string, unknown>;
  /** A run where the rest of the machine was busier than this (share of all CPUs) is retried. */
  maxOthersShare: number;
  retries: number;
  /**
   * CPUs to keep apart: the database, its clients and the product on `workload`, the emulated
   * plan's polling controller on `controller` (its thousands of wake-ups a second are no part of
   * the workload the product observes CPU by CPU). Absent: no pinning.
   */
  cpus?: { workload: number; controller: number };
  /** false: no busy filler while throttled (the bare quota's stop-and-go; emulation.ts). */
  filler?: boolean;
  log: (line: string) => void;
}

export interface Run {
  round: number;
  plan: string;
  workload: string;
  /** pgbench: mean latency from the scheduled start (ms, queueing included); restore: the time spent working (ms). */
  latencyMs: number;
  /** pgbench: the latency without the schedule lag, the query's own time (ms); restore: as latencyMs. */
  serviceMs: number;
  /** pgbench: transactions per second; restore: chunks per second of work. */
  throughput: number;
  serverCpuMs: number;
  throttled: number;
  /** CPU the busy filler spent keeping the workload's CPU busy while throttled (ms). */
  fillerCpuMs: number;
  othersShare: number;
  disturbed: boolean;
  read: WorkloadRead;
  benchmarkId: string;
}

export interface Calibration {
  rows: Record<string, number>;
  cpuMsPerQuery: Record<string, number>;
}

/** A process's CPU and that of its reaped children (0 once it is gone). */
const procCpuMs = (pid: number | 'self'): Promise<number> => cpuMsOrZero(pid, { reaped: true });

const machineBusyMs = async (): Promise<number> => {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] ?? '';
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  // All but idle and iowait, in USER_HZ ticks.
  return ((t.reduce((s, x) => s + x, 0) - (t[3] ?? 0) - (t[4] ?? 0)) * 1000) / 100;
};

/** Rows per query for `cpuMs` of server CPU, from back-to-back runs (two refining passes). */
const calibrate = async (cluster: Cluster, group: PlanGroup, cpuMs: number): Promise<[number, number]> => {
  let rows = cpuMs * 8000;
  let measured = 0;
  for (let pass = 0; pass < 3; pass++) {
    const transactions = Math.max(20, Math.round(400 / cpuMs));
    const u0 = await group.usageNs();
    await pgbench(cluster, { rows, transactions });
    measured = ((await group.usageNs()) - u0) / 1e6 / transactions;
    if (pass < 2) rows = Math.round((rows * cpuMs) / measured);
  }
  return [rows, measured];
};

const rotate = <T>(xs: readonly T[], by: number): T[] => xs.map((_, i) => xs[(i + by) % xs.length]!);

export const runWorkloadCheck = async (
  o: RunOptions,
): Promise<{
  runs: Run[];
  calibration: Calibration;
  throttlingProof: string[];
  /** The benchmarks the estimates used, by id (their costs, for a model read again offline). */
  benchmarks: Record<string, unknown>;
}> => {
  // Every process started from here on (cluster, clients, product) inherits this affinity.
  if (o.cpus) execFileSync('taskset', ['-a', '-p', '-c', String(o.cpus.workload), String(process.pid)]);
  const group = await planGroup(`powerplan-workload-${process.pid}`, o.cpus?.controller, {
    filler: o.filler ?? true,
  });
  /** This script's CPU, the product's and the emulation's own processes' (not the rest of the machine). */
  const ourCpuMs = async (p: Product) =>
    (await procCpuMs('self')) + (await procCpuMs(p.pid)) + (await group.emulationCpuMs());
  let cluster: Cluster | undefined;
  let product: Product | undefined;
  const onSignal = () => {
    void Promise.allSettled([cluster?.stop(), product?.stop()])
      .then(() => Promise.allSettled([group.remove(), rm(work, { recursive: true, force: true })]))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await mkdir(o.temp, { recursive: true });
  // Root's, readable by the cluster's user below it; the product's state directory is root's alone.
  const work = await mkdtemp(join(o.temp, 'run-'));
  await chmod(work, 0o755);
  const stateDir = join(work, 'powerplan');
  await mkdir(stateDir, { mode: 0o700 });
  try {
    cluster = await startCluster({ parent: work, port: o.pgPort });
    await group.adopt(cluster.pid);
    product = await startProduct({ stateDir, port: o.productPort, backend: o.backend });
    const calibration: Calibration = { rows: {}, cpuMsPerQuery: {} };
    for (const w of o.workloads) {
      if (w.kind !== 'pgbench' || w.cpuMs === undefined || calibration.rows[String(w.cpuMs)]) continue;
      const [rows, ms] = await calibrate(cluster, group, w.cpuMs);
      calibration.rows[String(w.cpuMs)] = rows;
      calibration.cpuMsPerQuery[String(w.cpuMs)] = ms;
      o.log(`calibrated: ${rows} rows = ${ms.toFixed(2)} ms of server CPU per query (target ${w.cpuMs} ms)`);
    }
    const dump = o.workloads.some((w) => w.kind === 'restore') ? await makeDump(cluster, o.restore.rows) : '';
    const runs: Run[] = [];
    const throttlingProof: string[] = [];
    const benchmarks: Record<string, unknown> = {};
    let dbNo = 0;
    for (let round = 0; round < o.rounds; round++) {
      for (const plan of rotate(o.plans, round)) {
        const stop = await group.apply(plan);
        const th0 = await group.throttling();
        let benchmarkId = '';
        try {
          await group.adopt(product.pid);
          try {
            const b = await product.benchmark(o.benchmark);
            benchmarkId = b.id;
            benchmarks[b.id] = b;
            o.log(`round ${round + 1} ${plan.name}: benchmark ${b.id}: ${b.summary.headline ?? ''}`);
          } finally {
            await group.release(product.pid);
          }
          for (const w of rotate(o.workloads, round)) {
            let best: Run | undefined;
            for (let attempt = 0; ; attempt++) {
              const c = cluster;
              const p = product;
              const before = {
                busy: await machineBusyMs(),
                ours: await ourCpuMs(p),
                group: await group.usageNs(),
                throttled: (await group.throttling()).nrThrottled,
                filler: await group.fillerCpuMs(),
                t: performance.now(),
              };
              await p.workload();
              let latencyMs: number;
              let serviceMs: number;
              let throughput: number;
              if (w.kind === 'pgbench') {
                const r = await pgbench(c, {
                  rows: calibration.rows[String(w.cpuMs)]!,
                  rate: w.rate!,
                  seconds: o.seconds,
                });
                latencyMs = r.latencyMs;
                serviceMs = r.latencyMs - r.lagMs;
                throughput = r.tps;
              } else {
                const r = await pacedRestore(c, { dump, db: `restore_${dbNo++}`, ...o.restore });
                latencyMs = r.workMs;
                serviceMs = r.workMs;
                throughput = r.chunks / (r.workMs / 1000);
              }
              const read = await p.workload();
              const wallMs = performance.now() - before.t;
              const serverCpuMs = ((await group.usageNs()) - before.group) / 1e6;
              const oursMs = (await ourCpuMs(p)) - before.ours;
              const others = (await machineBusyMs()) - before.busy - serverCpuMs - oursMs;
              const othersShare = Math.max(0, others / (wallMs * availableParallelism()));
              const disturbed = othersShare > o.maxOthersShare;
              const run: Run = {
                round,
                plan: plan.name,
                workload: w.name,
                latencyMs,
                serviceMs,
                throughput,
                serverCpuMs,
                throttled: (await group.throttling()).nrThrottled - before.throttled,
                fillerCpuMs: (await group.fillerCpuMs()) - before.filler,
                othersShare,
                disturbed,
                read,
                benchmarkId,
              };
              o.log(
                `round ${round + 1} ${plan.name} / ${w.name}: ${latencyMs.toFixed(2)} ms (own ${serviceMs.toFixed(2)} ms), ${throughput.toFixed(1)}/s, ` +
                  `estimate ${read.estimate ? `${read.estimate.addedPercent}% (${read.estimate.low}-${read.estimate.high})` : `none (${read.reason})`}, ` +
                  `throttled ${run.throttled}x, filler ${run.fillerCpuMs.toFixed(0)} ms, rest of the machine ${(othersShare * 100).toFixed(0)}% busy${disturbed ? ' (disturbed)' : ''}`,
              );
              // The least disturbed attempt is kept.
              if (!best || run.othersShare < best.othersShare) best = run;
              if (!disturbed || attempt >= o.retries) {
                runs.push(best);
                break;
              }
              await sleep(3000);
            }
          }
        } finally {
          const counters = await stop();
          const th1 = await group.throttling();
          if (plan.ramp)
            throttlingProof.push(
              `round ${round + 1} ${plan.name}: quota dropped ${counters.drops}x, lifted ${counters.lifts}x; ` +
                `nr_throttled +${th1.nrThrottled - th0.nrThrottled}, throttled ${(th1.throttledMs - th0.throttledMs).toFixed(0)} ms`,
            );
        }
      }
    }
    return { runs, calibration, throttlingProof, benchmarks };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await product?.stop();
    await cluster?.stop();
    await group.remove();
    await rm(work, { recursive: true, force: true });
  }
};

export { PLANS };
