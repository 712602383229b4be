/**
 * The short version of `npm run perf:workload`: one pgbench rate under two conditions (no
 * emulation and the slower ramp), one round, against a throwaway PostgreSQL 15 cluster. It checks
 * the shapes only (every run measured, the product's reads present, the emulation's quota biting,
 * nothing left behind), never timings. Needs root and Debian's postgresql package: skipped outside
 * CI without them, failed in CI (.ci/run installs the package).
 */
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PLANS } from '../../perf/lib/emulation.ts';
import { havePostgres } from '../../perf/lib/postgres.ts';
import { runWorkloadCheck } from '../../perf/lib/workload-run.ts';
import { conditions, NONE, table } from '../../perf/lib/workload-table.ts';
import { requireTool } from './tools.ts';

/** Postmasters whose data directory is below `dir` (this run's: another may run beside it). */
const postmasters = async (dir: string): Promise<number> => {
  let n = 0;
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const cmd = await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '');
    if (cmd.startsWith('/usr/lib/postgresql/15/bin/postgres\0') && cmd.includes(`\0${dir}/`)) n++;
  }
  return n;
};

/** The directory of this run's busy filler (its FIFO and the group's task list): powerplan-workload-<pid>-filler-*. */
const FILLER_DIR = `powerplan-workload-${process.pid}-filler-`;

/** Busy fillers (perf/lib/slow-clock-filler.py) of this run. */
const fillers = async (): Promise<number> => {
  let n = 0;
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const cmd = await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes('slow-clock-filler.py\0') && cmd.includes(`/${FILLER_DIR}`)) n++;
  }
  return n;
};

test('perf:workload, short: pgbench under no emulation and the slower ramp, with the product estimate', {
  timeout: 300_000,
}, async (t) => {
  if (!requireTool(t, havePostgres(), 'PostgreSQL 15 and root', 'apt-get install postgresql (as root)'))
    return;
  const temp = await mkdtemp(join(tmpdir(), 'powerplan-pg-'));
  // The cluster's user must reach its directory below.
  await chmod(temp, 0o755);
  try {
    const plans = PLANS.filter((p) => p.name === NONE || p.name === 'slower ramp');
    const { runs, calibration } = await runWorkloadCheck({
      temp,
      pgPort: 5432,
      productPort: 0,
      backend: 'simulated',
      rounds: 1,
      seconds: 3,
      minQueries: 0,
      plans,
      workloads: [{ name: 'mid', kind: 'pgbench', cpuMs: 2.5, rate: 40 }],
      restore: { rows: 1000, chunkBytes: 65536, waitMs: 10 },
      benchmark: { profile: 'quick', force: true },
      maxOthersShare: 1,
      retries: 0,
      log: () => {},
    });
    assert.ok((calibration.rows['2.5'] ?? 0) > 0, 'the query was calibrated');
    assert.deepEqual(runs.map((r) => r.plan).sort(), ['none', 'slower ramp']);
    for (const r of runs) {
      assert.equal(r.workload, 'mid');
      assert.ok(
        r.latencyMs > 0 && r.throughput > 0 && r.serverCpuMs > 0 && r.workMs > 0,
        `${r.plan}: measured`,
      );
      assert.match(r.benchmarkId, /^bm-/);
      assert.equal(typeof r.read.observation.windowSeconds, 'number');
      if (r.read.estimate) assert.ok(r.read.estimate.low <= r.read.estimate.addedPercent);
      else assert.equal(typeof r.read.reason, 'string');
    }
    assert.equal(runs.find((r) => r.plan === NONE)?.throttled, 0, 'no quota without emulation');
    assert.ok(
      (runs.find((r) => r.plan === 'slower ramp')?.throttled ?? 0) > 0,
      'the quota bit under the ramp',
    );
    assert.equal(runs.find((r) => r.plan === NONE)?.fillerCpuMs, 0, 'no filler without emulation');
    const slowed = runs.find((r) => r.plan === 'slower ramp');
    assert.ok((slowed?.fillerCpuMs ?? 0) > 0, 'the filler kept the CPU busy while the ramp throttled');
    assert.ok(slowed?.read.observation.workBurstsPerSecond !== undefined, 'the work bursts were read');
    assert.ok(
      (slowed?.heldMs ?? 0) > 0 && (slowed?.workCpuMs ?? 0) > 0,
      "the run split the work's time into its CPU and the time the quota held it back",
    );
    const cs = conditions(runs);
    assert.equal(cs.length, 2);
    assert.equal(cs.find((c) => c.plan === NONE)?.latencyChange.median, 0);
    assert.equal(cs.find((c) => c.plan === NONE)?.added.median, 0, 'nothing held back without emulation');
    assert.match(table(cs), /^\| workload \| emulated plan \|/);
  } finally {
    const left = await readdir(temp);
    await rm(temp, { recursive: true, force: true });
    assert.deepEqual(left, [], 'the run removed its directory');
  }
  assert.equal(await postmasters(temp), 0, 'no postmaster of this run left running');
  assert.equal(await fillers(), 0, 'no busy filler of this run left running');
  const shm = await readdir('/dev/shm').catch(() => []);
  assert.ok(!shm.some((d) => d.startsWith(FILLER_DIR)), "the filler's directory was removed");
  const groups = await readdir('/sys/fs/cgroup/cpu').catch(() => []);
  assert.ok(
    !groups.some((g) => g.startsWith(`powerplan-workload-${process.pid}`)),
    "the cgroups (the emulation's and its filler's) were removed",
  );
});
