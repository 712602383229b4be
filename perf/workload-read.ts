/**
 * What one read of the idle counters costs (the read a request or a scrape makes, then the deltas
 * and the model): CPU time per read on this machine's own /sys and /proc, and on generated trees
 * of 2, 64 and 256 CPUs with 4 idle states each, beside a reference read in the same run (one
 * read of /proc/stat, the least any observation needs). Goal: <= 2 ms CPU per read on 2 CPUs.
 *
 *   npm run perf:workload-read -- [--reads 200]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { estimateWorkloadCost } from '../src/advice/workload-cost.ts';
import { publishedCosts } from '../src/advice/workload-costs.ts';
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

const readAndEstimate = (read: IdleCounterReader) => {
  let prev: Awaited<ReturnType<IdleCounterReader>> | null = null;
  return async () => {
    const cur = await read();
    estimateWorkloadCost(observe(prev, cur, prev ? 'previous-read' : 'boot'), publishedCosts());
    prev = cur;
  };
};

header('Workload observation: CPU time per read of the idle counters');
const reference = await cpuPerCall(() => readFileSync('/proc/stat', 'latin1'));
const rows: [string, number][] = [];
rows.push([
  'this machine (/sys, /proc)',
  await cpuPerCall(readAndEstimate(createLinuxIdleReader({ sysfsRoot: '/sys', procfsRoot: '/proc' }))),
]);
const states = ['POLL', 'C1', 'C1E', 'C6'].map((name, i) => ({ name, latency: [0, 2, 10, 92][i]! }));
for (const cpus of [2, 64, 256]) {
  const tree = await makeIdleTree(await mkdtemp(join(tmpdir(), 'powerplan-perf-idle-')), cpus, states);
  try {
    const work = Array.from({ length: cpus }, () => ({
      busyTicks: 1000,
      idleTicks: 9000,
      states: states.map(() => ({ usage: 123_456, timeUs: 9_876_543 })),
    }));
    await tree.write(1000, work);
    rows.push([
      `generated tree, ${cpus} CPUs x 4 states`,
      await cpuPerCall(
        readAndEstimate(createLinuxIdleReader({ sysfsRoot: tree.sysfs, procfsRoot: tree.procfs })),
      ),
    ]);
  } finally {
    await tree.cleanup();
  }
}
console.log(
  `Reference (one read of /proc/stat): ${reference.toFixed(3)} ms CPU per read; ${reads} reads per case.\n`,
);
console.log('| case | CPU ms per read | x reference |');
console.log('|---|---:|---:|');
for (const [name, ms] of rows) console.log(`| ${name} | ${ms.toFixed(3)} | ${(ms / reference).toFixed(1)} |`);
const two = rows.find(([n]) => n.startsWith('generated tree, 2 '))![1];
const big = rows.at(-1)![1];
console.log(`\nGoal <= 2 ms CPU per read on 2 CPUs: ${two.toFixed(3)} ms, ${verdict(two, 2, ' ms')}.`);
console.log(
  `Growth: 256 CPUs cost ${(big / two).toFixed(0)}x 2 CPUs (the files read grow as CPUs x states x 5).`,
);
footer();
