/**
 * perf:workload's sweep of what a check killed outright left behind (perf/lib/leftovers.ts): a
 * run directory of a check that is gone goes with the processes naming it, one of a check still
 * running stays; cgroups and FIFO directories named after a gone check's pid go, a living one's
 * stay; a run directory others may write to is refused. Fake cgroup roots and /dev/shm stand in
 * for the real ones; the processes are real.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { markRun, ownTempDir, sweepLeftovers } from '../../perf/lib/leftovers.ts';

const PREFIX = 'powerplan-workload-';

/** A process id no process has now: a child that has exited. */
const deadPid = async (): Promise<number> => {
  const c = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => c.once('exit', r));
  return c.pid!;
};

test('a gone check: its run directory, the processes naming it, its cgroups and FIFO directory are removed', async () => {
  const root = await mkdtemp(join(tmpdir(), 'powerplan-leftovers-'));
  try {
    const temp = join(root, 'checks');
    await ownTempDir(temp);
    const gone = await deadPid();
    const old = join(temp, 'run-old');
    await mkdir(join(old, 'powerplan'), { recursive: true });
    await writeFile(join(old, 'check.pid'), `${gone}\n`);
    // A product left running: its command line names the run's state directory.
    const product = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', join(old, 'powerplan')]);
    const exited = new Promise((r) => product.once('exit', (_code, signal) => r(signal)));
    // A run of a check still running (this process).
    const live = join(temp, 'run-live');
    await mkdir(live);
    await markRun(live);
    const cgroups = join(root, 'cpu');
    for (const d of [`${PREFIX}${gone}`, `${PREFIX}${gone}-fill`, `${PREFIX}${process.pid}`, 'other'])
      await mkdir(join(cgroups, d), { recursive: true });
    const shm = join(root, 'shm');
    for (const d of [`${PREFIX}${gone}-filler-abc`, `${PREFIX}${process.pid}-filler-def`])
      await mkdir(join(shm, d), { recursive: true });

    const removed = await sweepLeftovers({ temp, prefix: PREFIX, cgroupRoots: [cgroups], shm });

    assert.equal(await exited, 'SIGTERM', 'the leftover product was ended');
    assert.equal(existsSync(old), false);
    assert.equal(existsSync(live), true, 'a living check keeps its run');
    assert.equal(existsSync(join(cgroups, `${PREFIX}${gone}`)), false);
    assert.equal(existsSync(join(cgroups, `${PREFIX}${gone}-fill`)), false);
    assert.equal(existsSync(join(cgroups, `${PREFIX}${process.pid}`)), true);
    assert.equal(existsSync(join(cgroups, 'other')), true);
    assert.equal(existsSync(join(shm, `${PREFIX}${gone}-filler-abc`)), false);
    assert.equal(existsSync(join(shm, `${PREFIX}${process.pid}-filler-def`)), true);
    assert.equal(removed.length, 4, removed.join('\n'));
    assert.match(removed[0]!, /run-old \(1 process\(es\) ended\)/);
    // Nothing left: a second sweep finds nothing.
    assert.deepEqual(await sweepLeftovers({ temp, prefix: PREFIX, cgroupRoots: [cgroups], shm }), []);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a run directory others may write to is refused, and nothing in it is touched', async () => {
  const root = await mkdtemp(join(tmpdir(), 'powerplan-leftovers-'));
  try {
    const temp = join(root, 'shared');
    await mkdir(join(temp, 'run-x'), { recursive: true });
    await chmod(temp, 0o777);
    await assert.rejects(ownTempDir(temp), /closed to others \(owner \d+, mode 777\)/);
    assert.equal(existsSync(join(temp, 'run-x')), true);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
