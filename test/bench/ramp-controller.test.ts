/**
 * The emulated plan's controller (perf/lib/ramp-controller.ts) against files standing in for a
 * cgroup's: it drops the quota once the group has been quiet, writes it again when the group,
 * fallen, has worked and gone quiet again (the runtime a burst left stored would let the next
 * one start otherwise than after the fall), leaves it alone while nothing happens, and lifts it
 * on SIGTERM with its counts; that it moves the busy filler to fill when the group works or is
 * held back while its quota is low, and back to rest when the filler asks (where the group's tasks
 * are watched, only while one of them is runnable, and only once none is), writing it again into
 * the group it is in every few polls; and that it charges the
 * group's runnable tasks between ticks only while the quota is low, leaving their nice values as
 * they were.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdtemp, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../support/deps.ts';

/**
 * A task that is always runnable, at the lowest priority (nice 19): it takes next to no CPU from
 * the tests running beside it.
 */
const spinning = () => {
  const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  setPriority(spinner.pid!, 19);
  return spinner;
};

/** A task's state as /proc/<pid>/stat gives it (R runnable, S asleep, ...). */
const taskState = async (pid: number) => {
  const line = await readFile(`/proc/${pid}/stat`, 'latin1');
  return line.charAt(line.lastIndexOf(')') + 2);
};

const until = async (what: string, ok: () => Promise<boolean>, ms = 3000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(5);
  }
};

/** The slower ramp's quota, falling after 30 ms, never lifted by work; polled every millisecond. */
const POLICY = { periodUs: 4000, lowPercent: 25, idleMs: 30, quietPercent: 5, busyMs: 60_000, pollUs: 1000 };

/** A group's cpu.stat with `throttled` periods held back. */
const stat = (throttled: number) => `nr_periods 0\nnr_throttled ${throttled}\nthrottled_time 0\n`;

/** Starts the controller on stand-in files; answers its output so far and how to stop it. */
const controller = (args: object) => {
  const c = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'perf/lib/ramp-controller.ts'), JSON.stringify(args)],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  c.stdout.on('data', (d) => {
    out += d;
  });
  return {
    out: () => out,
    stop: async () => {
      const exited = new Promise((res) => c.once('exit', res));
      c.kill('SIGTERM');
      await exited;
    },
  };
};

/** Replaces a stand-in file whole (a rename), as the kernel's file never reads half written. */
const replace = async (path: string, text: string) => {
  await writeFile(`${path}.new`, text);
  await rename(`${path}.new`, path);
};

/**
 * Stand-in files of a group and of a busy filler (pid 4242) in `dir`, the group's tasks `tasks`,
 * and the controller started on them with the filler.
 */
const withFiller = async (dir: string, tasks: string) => {
  const path = (name: string) => join(dir, name);
  await writeFile(path('cpuacct.usage'), '0');
  await writeFile(path('cpu.stat'), stat(0));
  await writeFile(path('cpu.cfs_quota_us'), '-1');
  for (const f of ['fill', 'rest']) await writeFile(path(f), '');
  await writeFile(path('tasks'), tasks);
  execFileSync('mkfifo', [path('fifo')]);
  const c = controller({
    usagePath: path('cpuacct.usage'),
    statPath: path('cpu.stat'),
    quotaPath: path('cpu.cfs_quota_us'),
    ...POLICY,
    tasks: path('tasks'),
    filler: { pid: 4242, fill: path('fill'), rest: path('rest'), fifo: path('fifo'), list: path('list') },
  });
  return { c, path, read: (name: string) => readFile(path(name), 'utf8') };
};

test('ramp controller: drops when quiet, falls again after work, leaves a quiet group alone', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-ramp-'));
  const usagePath = join(dir, 'cpuacct.usage');
  const statPath = join(dir, 'cpu.stat');
  const quotaPath = join(dir, 'cpu.cfs_quota_us');
  await writeFile(usagePath, '0');
  await writeFile(statPath, stat(0));
  await writeFile(quotaPath, '-1');
  const c = controller({ usagePath, statPath, quotaPath, ...POLICY });
  const quota = () => readFile(quotaPath, 'utf8');
  try {
    await until('ready', async () => c.out().includes('ready\n'), 30_000);
    await until('the quota dropped to 1 ms', async () => (await quota()) === '1000');
    // A mark in place of the quota shows whether the controller writes it again.
    await writeFile(quotaPath, 'mark');
    await sleep(150);
    assert.equal(await quota(), 'mark', 'a fallen group that stays quiet: the quota is not written again');
    // Work while fallen (2 ms of CPU, far from the lift: one change read is work), then quiet again.
    await replace(usagePath, '2000000');
    await until('the quota written again once quiet', async () => (await quota()) === '1000');
    await writeFile(quotaPath, 'mark');
    await sleep(150);
    assert.equal(await quota(), 'mark', 'written once per quiet stretch');
  } finally {
    await c.stop();
  }
  const counts = JSON.parse(c.out().trim().split('\n').at(-1) ?? '{}');
  assert.deepEqual(counts, { drops: 1, lifts: 0, refalls: 1, charges: 0 });
  assert.equal(await quota(), '-1', 'lifted on SIGTERM');
  await rm(dir, { recursive: true, force: true });
});

test('ramp controller: the filler fills on work while the quota is low, rests when it asks', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-ramp-'));
  const { c, path, read } = await withFiller(dir, '');
  try {
    await until('ready', async () => c.out().includes('ready\n'), 30_000);
    await until('the quota dropped', async () => (await read('cpu.cfs_quota_us')) === '1000');
    await sleep(100);
    assert.equal(await read('fill'), '', 'a quiet group leaves the filler resting');
    // Work with the quota low: the filler is moved in, to be there when the group is held back.
    await replace(path('cpuacct.usage'), '300000');
    await until('moved to fill on work', async () => (await read('fill')) === '4242');
    await writeFile(path('rest'), '');
    // The filler found nothing of the group runnable and asks to rest (a FIFO it never waits on).
    const ask = await open(path('fifo'), constants.O_WRONLY | constants.O_NONBLOCK);
    await ask.write('r');
    await until('moved to rest when it asked', async () => (await read('rest')) === '4242');
    await writeFile(path('fill'), '');
    // Held back with no CPU used (a throttled group) is work too.
    await replace(path('cpu.stat'), stat(1));
    await until('moved to fill when held back', async () => (await read('fill')) === '4242');
    await ask.close();
  } finally {
    await c.stop();
  }
  await rm(dir, { recursive: true, force: true });
});

test('ramp controller: where the tasks are watched, the filler fills only while a task is runnable', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-ramp-'));
  const spinner = spinning();
  const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600_000)'], { stdio: 'ignore' });
  const { c, path, read } = await withFiller(dir, `${sleeper.pid}\n`);
  const ask = await open(path('fifo'), constants.O_RDWR | constants.O_NONBLOCK);
  try {
    await until('ready', async () => c.out().includes('ready\n'), 30_000);
    await until('the quota dropped', async () => (await read('cpu.cfs_quota_us')) === '1000');
    // The sleeper past its start (a Node.js that starts runs for a while, longer on a busy machine).
    await until('the sleeper asleep', async () => (await taskState(sleeper.pid!)) === 'S', 30_000);
    // CPU used with no task runnable at any poll (a background blip): the filler stays resting.
    await replace(path('cpuacct.usage'), '100000');
    await sleep(150);
    assert.equal(await read('fill'), '', 'a blip over before any poll leaves the filler resting');
    // A task that runs: the filler is moved in once the controller has listed it (every 50 polls)
    // and sees the group use CPU.
    await replace(path('tasks'), `${sleeper.pid}\n${spinner.pid}\n`);
    let usage = 100_000;
    await until('moved to fill while a task is runnable', async () => {
      await writeFile(path('cpu.cfs_quota_us'), 'mark');
      usage += 1_000_000;
      await replace(path('cpuacct.usage'), String(usage));
      return (await read('fill')) === '4242';
    });
    // The group quiet again (the quota written again): no move to fill, which drops a standing
    // request to rest, comes after the request below.
    await until(
      'the quota written again once quiet',
      async () => (await read('cpu.cfs_quota_us')) === '1000',
    );
    await writeFile(path('rest'), '');
    // The filler asks to rest while the task still runs: it is not moved.
    await ask.write('r');
    await sleep(150);
    assert.equal(await read('rest'), '', 'not rested while a task of the group is runnable');
    // The task's work ends (it leaves the list): the standing request is granted.
    await replace(path('tasks'), `${sleeper.pid}\n`);
    await until('moved to rest once nothing is runnable', async () => (await read('rest')) === '4242');
    // Written again into the group it is in every few polls: a cgroup migration shortly after
    // another is quick, one after a quiet stretch waits for an RCU grace period.
    await writeFile(path('fill'), '');
    await writeFile(path('rest'), '');
    await until('written again where it rests', async () => (await read('rest')) === '4242');
    assert.equal(await read('fill'), '', 'and not moved to fill by that');
    assert.equal(await read('list'), `${sleeper.pid}\n`, 'the filler reads the tasks from its own copy');
  } finally {
    await ask.close();
    await c.stop();
    spinner.kill();
    sleeper.kill();
    await rm(dir, { recursive: true, force: true });
  }
});

test('ramp controller: charges the runnable tasks between ticks while the quota is low, and only those', {
  skip: process.getuid?.() !== 0 && 'needs root: a nice value set a step down and back',
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-ramp-'));
  const path = (name: string) => join(dir, name);
  const spinner = spinning();
  const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600_000)'], { stdio: 'ignore' });
  /** Runs the controller for `ms` over the tasks listed; answers its charges. */
  const charges = async (tasks: readonly number[], policy: object, ms: number) => {
    await writeFile(path('cpuacct.usage'), '0');
    await writeFile(path('cpu.stat'), stat(0));
    await writeFile(path('cpu.cfs_quota_us'), '-1');
    await writeFile(path('tasks'), tasks.map((t) => `${t}\n`).join(''));
    const c = controller({
      usagePath: path('cpuacct.usage'),
      statPath: path('cpu.stat'),
      quotaPath: path('cpu.cfs_quota_us'),
      ...policy,
      tasks: path('tasks'),
      charge: true,
    });
    try {
      await until('ready', async () => c.out().includes('ready\n'), 30_000);
      await sleep(ms);
    } finally {
      await c.stop();
    }
    return JSON.parse(c.out().trim().split('\n').at(-1) ?? '{}').charges as number;
  };
  try {
    const nice = [getPriority(spinner.pid), getPriority(sleeper.pid)];
    assert.equal(await charges([sleeper.pid!], POLICY, 300), 0, 'a sleeping task is not charged');
    assert.ok(
      (await charges([spinner.pid!, sleeper.pid!], POLICY, 300)) > 10,
      'a running one is, every poll',
    );
    const lifted = { ...POLICY, idleMs: 60_000 };
    assert.equal(await charges([spinner.pid!], lifted, 300), 0, 'none while the quota is lifted');
    assert.deepEqual([getPriority(spinner.pid), getPriority(sleeper.pid)], nice, 'nice values as they were');
  } finally {
    spinner.kill();
    sleeper.kill();
    await rm(dir, { recursive: true, force: true });
  }
});
