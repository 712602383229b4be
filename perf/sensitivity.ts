/**
 * Sensitivity check of the CPU benchmark (a script, not a test): runs the same profile unthrottled
 * and under a CPU quota (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max), and `sysbench cpu` under the
 * same conditions as a well-known peer. The sustained single-thread score should fall in
 * proportion to the quota, as sysbench's does. Needs root (to write the cgroup files).
 *
 *   npm run perf:sensitivity -- [--profile quick|standard] [--quota 50] [--repeat 1] [--nice -20]
 *
 * On a machine shared with other work, the competing processes take the CPU share the quota is
 * meant to take away. The script waits a while for a quiet machine, and runs at a raised priority
 * (nice -20 by default; threads and children inherit it) so that its share, not the neighbours',
 * decides what it gets. The quota is enforced regardless of priority.
 */
import { availableParallelism, cpus, release, setPriority } from 'node:os';
import { analyze } from '../src/bench/analysis.ts';
import { benchPlan, capMs } from '../src/bench/profiles.ts';
import { runBenchmark } from '../src/bench/runner.ts';
import type { BenchmarkProfile } from '../src/domain/benchmark.ts';
import { perfArgs } from './lib/args.ts';
import { cgroupQuota } from './lib/cgroup.ts';
import { quietBusyPercent } from './lib/machine.ts';
import { ensureSysbench, sysbenchCpu, sysbenchVersion } from './lib/sysbench.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    profile: { type: 'string', default: 'quick' },
    quota: { type: 'string', default: '50' },
    repeat: { type: 'string', default: '1' },
    nice: { type: 'string', default: '-20' },
  },
});
const profile = values.profile as BenchmarkProfile;
if (profile !== 'quick' && profile !== 'standard') throw new Error('--profile must be quick or standard');
const quotaPercent = Number(values.quota);
if (!(quotaPercent > 0 && quotaPercent <= 100))
  throw new Error('--quota must be a percentage of one CPU, 1..100');
const repeat = Math.max(1, Math.trunc(Number(values.repeat)));
const nice = Math.trunc(Number(values.nice));
setPriority(nice);

const CGROUP_NAME = 'powerplan-sensitivity';

interface Row {
  condition: string;
  busyBeforePercent: number;
  singleMops: number;
  singleCv: number;
  allCoreMops: number;
  penaltyLongestGapPercent: number;
  noisy: boolean;
  durationMs: number;
  sysbenchEventsPerSecond: number;
}

const measure = async (condition: string): Promise<Row> => {
  const busyBeforePercent = await quietBusyPercent();
  const plan = benchPlan(profile, availableParallelism());
  const t0 = performance.now();
  const raw = await runBenchmark(plan, { capMs: capMs(plan) });
  const durationMs = Math.round(performance.now() - t0);
  const a = analyze(raw);
  const gaps = a.phases.burstsAfterIdle;
  return {
    condition,
    busyBeforePercent,
    singleMops: a.phases.sustainedSingle.throughput.value,
    singleCv: a.phases.sustainedSingle.slices.cv,
    allCoreMops: a.phases.sustainedAllCore.throughput.value,
    penaltyLongestGapPercent: gaps[gaps.length - 1]?.penaltyPercent.value ?? 0,
    noisy: a.noisy,
    durationMs,
    sysbenchEventsPerSecond: await sysbenchCpu(),
  };
};

await ensureSysbench();
const quota = await cgroupQuota(CGROUP_NAME, quotaPercent);
const rows: Row[] = [];
let throttling = '';
await quota.enter();
try {
  for (let i = 0; i < repeat; i++) {
    await quota.set(null);
    rows.push(await measure('unthrottled'));
    await quota.set(quotaPercent);
    rows.push(await measure(`quota ${quotaPercent}%`));
  }
  throttling = await quota.stat();
} finally {
  await quota.leave();
  await quota.remove().catch(() => undefined);
}

const base = rows.find((r) => r.condition === 'unthrottled');
const ratio = (x: number, b: number | undefined) => (b ? (x / b).toFixed(2) : '-');
console.log(
  `Machine: ${cpus()[0]?.model.trim()}, ${availableParallelism()} logical CPUs, Linux ${release()}, Node ${process.version}, ${await sysbenchVersion()}`,
);
console.log(`Profile: ${profile}; throttle: ${quota.kind}; priority: nice ${nice}`);
console.log(`Throttling counters of the quota cgroup: ${throttling.trim().replaceAll('\n', ', ')}\n`);
console.log(
  '| condition | busy before | single-thread Mops/s (ratio) | slice cv | all-core Mops/s | burst penalty, longest gap | noisy | run ms | sysbench events/s (ratio) |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.condition} | ${r.busyBeforePercent}% | ${r.singleMops.toFixed(1)} (${ratio(r.singleMops, base?.singleMops)}) | ${r.singleCv.toFixed(3)} | ` +
      `${r.allCoreMops.toFixed(1)} | ${r.penaltyLongestGapPercent.toFixed(1)}% | ${r.noisy ? 'yes' : 'no'} | ${r.durationMs} | ` +
      `${r.sysbenchEventsPerSecond.toFixed(1)} (${ratio(r.sysbenchEventsPerSecond, base?.sysbenchEventsPerSecond)}) |`,
  );
}
