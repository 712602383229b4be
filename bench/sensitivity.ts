/**
 * Sensitivity check of the CPU benchmark (a script, not a test): runs the same profile unthrottled
 * and under a CPU quota (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max), and `sysbench cpu` under the
 * same conditions as a well-known peer. The sustained single-thread score should fall in
 * proportion to the quota, as sysbench's does. Needs root (to write the cgroup files).
 *
 *   npm run bench:sensitivity -- [--profile quick|standard] [--quota 50] [--repeat 1] [--nice -20]
 *
 * On a machine shared with other work, the competing processes take the CPU share the quota is
 * meant to take away. The script waits a while for a quiet machine, and runs at a raised priority
 * (nice -20 by default; threads and children inherit it) so that its share, not the neighbours',
 * decides what it gets. The quota is enforced regardless of priority.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, setPriority } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { analyze } from '../src/bench/analysis.ts';
import { sampleCpuLoad } from '../src/bench/cpu-load.ts';
import { benchPlan, capMs } from '../src/bench/profiles.ts';
import { runBenchmark } from '../src/bench/runner.ts';
import type { BenchmarkProfile } from '../src/domain/benchmark.ts';

const run = promisify(execFile);
const { values } = parseArgs({
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
const PERIOD_US = 100_000;

/**
 * A cgroup for this process (all its threads, and the children it starts while inside) whose CPU
 * quota can be switched on and off. Both conditions run inside it, with a high weight, so that the
 * quota is the only difference between them, whatever else the machine runs.
 */
interface Quota {
  kind: string;
  /** Applies the quota (percent of one CPU), or lifts it (null). */
  set(percent: number | null): Promise<void>;
  enter(): Promise<void>;
  leave(): Promise<void>;
  remove(): Promise<void>;
  /** The controller's throttling counters, proof that the quota was enforced. */
  stat(): Promise<string>;
}

const ownCgroupPath = async (match: (controllers: string) => boolean): Promise<string> => {
  for (const line of (await readFile('/proc/self/cgroup', 'utf8')).split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers !== undefined && path !== undefined && match(controllers)) return path;
  }
  return '/';
};

const quotaUs = (percent: number) => String(Math.round((PERIOD_US * percent) / 100));

const cgroupQuota = async (percent: number): Promise<Quota> => {
  const v1 = '/sys/fs/cgroup/cpu';
  if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
    const home = join(v1, await ownCgroupPath((c) => c.split(',').includes('cpu')));
    const dir = join(v1, CGROUP_NAME);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    // The weight of nice -20: the run gets its share even beside other work.
    await writeFile(join(dir, 'cpu.shares'), '88761');
    return {
      kind: `cgroup v1 cpu.cfs_quota_us=${quotaUs(percent)} cpu.cfs_period_us=${PERIOD_US}, cpu.shares=88761`,
      set: (p) => writeFile(join(dir, 'cpu.cfs_quota_us'), p === null ? '-1' : quotaUs(p)),
      enter: () => writeFile(join(dir, 'cgroup.procs'), String(process.pid)),
      leave: () => writeFile(join(home, 'cgroup.procs'), String(process.pid)),
      remove: () => rmdir(dir),
      stat: () => readFile(join(dir, 'cpu.stat'), 'utf8'),
    };
  }
  const v2 = '/sys/fs/cgroup';
  if (existsSync(join(v2, 'cgroup.controllers'))) {
    const home = join(v2, await ownCgroupPath((c) => c === ''));
    const dir = join(v2, CGROUP_NAME);
    await writeFile(join(v2, 'cgroup.subtree_control'), '+cpu').catch(() => undefined);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'cpu.weight'), '10000');
    return {
      kind: `cgroup v2 cpu.max="${quotaUs(percent)} ${PERIOD_US}", cpu.weight=10000`,
      set: (p) => writeFile(join(dir, 'cpu.max'), `${p === null ? 'max' : quotaUs(p)} ${PERIOD_US}`),
      enter: () => writeFile(join(dir, 'cgroup.procs'), String(process.pid)),
      leave: () => writeFile(join(home, 'cgroup.procs'), String(process.pid)),
      remove: () => rmdir(dir),
      stat: () => readFile(join(dir, 'cpu.stat'), 'utf8'),
    };
  }
  throw new Error('No writable cgroup cpu controller (v1 cpu.cfs_quota_us or v2 cpu.max) found.');
};

const ensureSysbench = async (): Promise<void> => {
  try {
    await run('sysbench', ['--version']);
    return;
  } catch {
    // not installed: install it below
  }
  const install = () => run('apt-get', ['install', '-y', 'sysbench'], { maxBuffer: 64 * 1024 * 1024 });
  try {
    await install();
  } catch {
    await run('apt-get', ['update'], { maxBuffer: 64 * 1024 * 1024 });
    await install();
  }
};

/** `sysbench cpu --threads=1 --time=5 run`: its "events per second" line. */
const sysbench = async (): Promise<number> => {
  const { stdout } = await run('sysbench', ['cpu', '--threads=1', '--time=5', 'run']);
  const m = /events per second:\s*([\d.]+)/.exec(stdout);
  if (!m) throw new Error(`unexpected sysbench output:\n${stdout}`);
  return Number(m[1]);
};

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

/**
 * Other work on the machine would take the CPU share the quota is meant to take away, and hide
 * its effect: wait (up to about 20 s) until the CPUs are under 30% busy, and report what was seen.
 */
const quietBusyPercent = async (): Promise<number> => {
  let load = await sampleCpuLoad(500);
  for (let i = 0; i < 10 && load.busyPercent > 30; i++) {
    process.stderr.write(`waiting for a quiet machine (${load.busyPercent}% busy)\n`);
    await new Promise((r) => setTimeout(r, 1500));
    load = await sampleCpuLoad(500);
  }
  return load.busyPercent;
};

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
    sysbenchEventsPerSecond: await sysbench(),
  };
};

await ensureSysbench();
const quota = await cgroupQuota(quotaPercent);
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
const { stdout: sysbenchVersion } = await run('sysbench', ['--version']);
console.log(
  `Machine: ${cpus()[0]?.model.trim()}, ${availableParallelism()} logical CPUs, Linux ${release()}, Node ${process.version}, ${sysbenchVersion.trim()}`,
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
