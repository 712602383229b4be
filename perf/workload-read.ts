/**
 * What one read of the idle counters costs (the read a request or a scrape makes, then the deltas
 * and the model): CPU time per read on this machine's own /sys and /proc, and on generated trees
 * of 2, 64 and 256 CPUs with 4 idle states each, beside a reference read in the same run (one
 * read of /proc/stat, the least any observation needs). The estimate uses costs of a standard
 * benchmark's shape (8 gaps of bursts after idle with their loss curves, 7 of the request stream
 * and of wake-ups) and a performance plan's beside them, so the whole model runs as under a plan
 * with a benchmark. Goal: <= 2 ms CPU per read on 2 CPUs.
 *
 *   npm run perf:workload-read -- [--reads 200]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlanCosts } from '../src/advice/plan-losses.ts';
import { estimateWorkloadCost } from '../src/advice/workload-cost.ts';
import type { IdleCounterReader } from '../src/domain/workload.ts';
import { observe } from '../src/platform/idle-delta.ts';
import { createLinuxIdleReader } from '../src/platform/linux/idle-counters.ts';
import { makeIdleTree } from '../test/support/idle-tree.ts';
import { perfArgs } from './lib/args.ts';
import { footer, header, verdict } from './lib/machine.ts';

const { values } = perfArgs(import.meta.filename, { options: { reads: { type: 'string', default: '200' } } });
const reads = Math.max(10, Number(values.reads));

/** CPU time (user + system) per call of `fn`, in ms, over `reads` calls after 10 to warm up. */
const cpuPerCall = async (fn: () => unknown): Promise<number> => {
  for (let i = 0; i < 10; i++) await fn();
  const start = process.cpuUsage();
  for (let i = 0; i < reads; i++) await fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / reads;
};

/** Costs of a standard benchmark's shape: a clock that loses `scale` x 10 ms at most. */
const benchmarkShaped = (scale: number): PlanCosts => {
  const range = (us: number) => ({ mid: us, low: us * 0.8, high: us * 1.2 });
  const gaps = [1, 2, 5, 10, 20, 50, 100, 200].map((ms) => ms * 1000);
  const fall = (gapUs: number) => Math.min(1, gapUs / 50_000);
  return {
    basis: 'benchmark',
    wake: gaps.slice(0, 7).map((gapUs) => ({ gapUs, costUs: range(20 * fall(gapUs)) })),
    ramp: gaps.map((gapUs) => ({
      gapUs,
      lossUs: range(scale * 10_000 * fall(gapUs)),
      rampUs: 30_000,
      startSlowdown: range(fall(gapUs)),
      unitUs: 1000,
      curve: [1, 2, 3, 5, 8, 13, 20, 30, 60].map((units) => ({
        workUs: units * 1000,
        lossUs: range(scale * 10_000 * fall(gapUs) * Math.min(1, units / 20)),
      })),
    })),
    stream: gaps.slice(1).map((gapUs) => ({
      gapUs,
      points: [1, 3].map((units) => ({
        workUs: units * 1000,
        lossUs: range(scale * 500 * units * fall(gapUs)),
      })),
    })),
  };
};
const planCosts = benchmarkShaped(1);
const performanceCosts = benchmarkShaped(0.1);

type Counters = Awaited<ReturnType<IdleCounterReader>>;

/**
 * One case: the read with its deltas against the previous read (what every request and scrape
 * does), and the estimate on a window in which work happened (between `first` and `second`; an
 * idle window stops before the model).
 */
const measure = async (name: string, read: IdleCounterReader, first: Counters, second: Counters) => {
  let prev: Counters | null = null;
  const readMs = await cpuPerCall(async () => {
    const cur = await read();
    observe(prev, cur, prev ? 'previous-read' : 'boot');
    prev = cur;
  });
  const observation = observe(first, second, 'previous-read');
  const outcome = estimateWorkloadCost(observation, planCosts, performanceCosts);
  if (!outcome.estimate) throw new Error(`${name}: no estimate to time (${outcome.reason})`);
  const estimateMs = await cpuPerCall(() => estimateWorkloadCost(observation, planCosts, performanceCosts));
  rows.push({ name, readMs, estimateMs, listed: observation.perCpu.length });
};

header('Workload observation: CPU time per read of the idle counters');
const reference = await cpuPerCall(() => readFileSync('/proc/stat', 'latin1'));
const rows: { name: string; readMs: number; estimateMs: number; listed: number }[] = [];
{
  const read = createLinuxIdleReader({ sysfsRoot: '/sys', procfsRoot: '/proc' });
  const first = await read();
  // Bursts of work of its own in the window (3 ms of work, 2 ms asleep), so there is work to estimate.
  const until = performance.now() + 1000;
  while (performance.now() < until) {
    const burst = performance.now() + 3;
    while (performance.now() < burst);
    await new Promise((r) => setTimeout(r, 2));
  }
  await measure('this machine (/sys, /proc)', read, first, await read());
}
const states = ['POLL', 'C1', 'C1E', 'C6'].map((name, i) => ({ name, latency: [0, 2, 10, 92][i]! }));
for (const cpus of [2, 64, 256]) {
  const tree = await makeIdleTree(await mkdtemp(join(tmpdir(), 'powerplan-perf-idle-')), cpus, states);
  try {
    // One second of 20% busy CPUs that wake 1000 times, spread over the states.
    const work = (seconds: number) =>
      Array.from({ length: cpus }, (_, c) => ({
        busyTicks: 20 * seconds + c,
        idleTicks: 80 * seconds,
        states: states.map((_, i) => ({ usage: 250 * seconds * (i + 1), timeUs: 200_000 * seconds })),
      }));
    const read = createLinuxIdleReader({ sysfsRoot: tree.sysfs, procfsRoot: tree.procfs });
    await tree.write(1000, work(1000));
    const first = await read();
    await tree.write(1001, work(1001));
    await measure(`generated tree, ${cpus} CPUs x 4 states`, read, first, await read());
  } finally {
    await tree.cleanup();
  }
}
console.log(
  `Reference (one read of /proc/stat): ${reference.toFixed(3)} ms CPU per read; ${reads} reads per case.\n`,
);
console.log('| case | read and deltas, CPU ms | estimate, CPU ms (CPUs listed) | together | x reference |');
console.log('|---|---:|---:|---:|---:|');
for (const r of rows) {
  const total = r.readMs + r.estimateMs;
  console.log(
    `| ${r.name} | ${r.readMs.toFixed(3)} | ${r.estimateMs.toFixed(3)} (${r.listed}) | ${total.toFixed(3)} | ${(total / reference).toFixed(1)} |`,
  );
}
const total = (r: (typeof rows)[number]) => r.readMs + r.estimateMs;
const two = total(rows.find((r) => r.name.startsWith('generated tree, 2 '))!);
const big = rows.at(-1)!;
console.log(`\nGoal <= 2 ms CPU per read on 2 CPUs: ${two.toFixed(3)} ms, ${verdict(two, 2, ' ms')}.`);
console.log(
  `Growth: 256 CPUs cost ${(total(big) / two).toFixed(0)}x 2 CPUs: the read grows as CPUs x states (5 small files per state and CPU), the estimate as the CPUs listed (at most 16, then one for the rest).`,
);
footer();
