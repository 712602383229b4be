/**
 * The emulated plan's controller (perf/lib/ramp-controller.ts) against files standing in for a
 * cgroup's: it drops the quota once the group has been quiet, writes it again when the group,
 * fallen, has worked and gone quiet again (the runtime a burst left stored would let the next
 * one start otherwise than after the fall), leaves it alone while nothing happens, and lifts it
 * on SIGTERM with its counts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../support/deps.ts';

const until = async (what: string, ok: () => Promise<boolean>, ms = 3000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(5);
  }
};

test('ramp controller: drops when quiet, falls again after work, leaves a quiet group alone', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-ramp-'));
  const usagePath = join(dir, 'cpuacct.usage');
  const statPath = join(dir, 'cpu.stat');
  const quotaPath = join(dir, 'cpu.cfs_quota_us');
  await writeFile(usagePath, '0');
  await writeFile(statPath, 'nr_periods 0\nnr_throttled 0\nthrottled_time 0\n');
  await writeFile(quotaPath, '-1');
  const args = {
    usagePath,
    statPath,
    quotaPath,
    periodUs: 4000,
    lowPercent: 25,
    idleMs: 30,
    quietPercent: 5,
    busyMs: 60_000,
    pollUs: 1000,
  };
  const c = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'perf/lib/ramp-controller.ts'), JSON.stringify(args)],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  c.stdout.on('data', (d) => {
    out += d;
  });
  const quota = () => readFile(quotaPath, 'utf8');
  try {
    await until('ready', async () => out.includes('ready\n'), 30_000);
    await until('the quota dropped to 1 ms', async () => (await quota()) === '1000');
    // A mark in place of the quota shows whether the controller writes it again.
    await writeFile(quotaPath, 'mark');
    await sleep(150);
    assert.equal(await quota(), 'mark', 'a fallen group that stays quiet: the quota is not written again');
    // Work while fallen (2 ms of CPU, far from the lift: one change read is work), then quiet again.
    // Written whole (a rename), as the kernel's file never reads half written.
    await writeFile(`${usagePath}.new`, '2000000');
    await rename(`${usagePath}.new`, usagePath);
    await until('the quota written again once quiet', async () => (await quota()) === '1000');
    await writeFile(quotaPath, 'mark');
    await sleep(150);
    assert.equal(await quota(), 'mark', 'written once per quiet stretch');
  } finally {
    const exited = new Promise((res) => c.once('exit', res));
    c.kill('SIGTERM');
    await exited;
  }
  const counts = JSON.parse(out.trim().split('\n').at(-1) ?? '{}');
  assert.deepEqual(counts, { drops: 1, lifts: 0, refalls: 1 });
  assert.equal(await quota(), '-1', 'lifted on SIGTERM');
  await rm(dir, { recursive: true, force: true });
});
