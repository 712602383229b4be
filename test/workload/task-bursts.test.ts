import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { IdleSnapshot, TaskCounters } from '../../src/domain/workload.ts';
import { MIN_WORK_COVERAGE, observe } from '../../src/platform/idle-delta.ts';
import {
  createTaskReader,
  parseSchedstatRunNs,
  parseStatCpu,
  parseStatStartS,
  parseVoluntarySwitches,
} from '../../src/platform/linux/task-bursts.ts';

/** A stat line as Linux 6.x prints it, with `cpu` in field 39, its start (12 ticks after boot) in field 22 and a name that holds `) (`. */
const statLine = (pid: number, cpu: number, comm = 'postgres: bench) (x') =>
  `${pid} (${comm}) S 1 ${pid} ${pid} 0 -1 4194560 ${Array.from({ length: 29 }, (_, i) => i).join(' ')} ${cpu} 0 0 0 0 0\n`;

/** The pids whose procfs files this process holds open under `proc`, one entry per descriptor. */
const openUnder = (proc: string): number[] =>
  readdirSync('/proc/self/fd')
    .flatMap((fd) => {
      try {
        return [readlinkSync(join('/proc/self/fd', fd))];
      } catch {
        return [];
      }
    })
    .filter((target) => target.startsWith(`${proc}/`))
    .map((target) => Number(target.slice(proc.length + 1).split('/')[0]))
    .sort((a, b) => a - b);

const writeTask = async (proc: string, pid: number, runNs: number, sleeps: number, cpu: number) => {
  const dir = join(proc, String(pid));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'schedstat'), `${runNs} 1000 ${sleeps + 3}\n`);
  await writeFile(
    join(dir, 'status'),
    `Name:\tpostgres\nvoluntary_ctxt_switches:\t${sleeps}\nnonvoluntary_ctxt_switches:\t3\n`,
  );
  await writeFile(join(dir, 'stat'), statLine(pid, cpu));
};

describe('the work bursts of the processes (Linux procfs)', () => {
  it('parses schedstat, status and stat, and refuses text it does not know', () => {
    assert.equal(parseSchedstatRunNs('123456789 2000 17\n'), 123456789);
    assert.equal(parseSchedstatRunNs('garbage'), null);
    assert.equal(
      parseVoluntarySwitches('Name:\tx\nvoluntary_ctxt_switches:\t42\nnonvoluntary_ctxt_switches:\t7\n'),
      42,
    );
    assert.equal(parseVoluntarySwitches('Name:\tx\n'), null);
    assert.equal(parseStatCpu(statLine(7, 13)), 13);
    assert.equal(parseStatCpu('7 (x) S 1'), null);
    assert.equal(parseStatStartS(statLine(7, 13)), 0.12);
    assert.equal(parseStatStartS('7 (x) S 1'), null);
  });

  it('reads every process, keeps the count of one that did not run, drops one that is gone, and keeps to its limit, newest first', async () => {
    const proc = await mkdtemp(join(tmpdir(), 'powerplan-tasks-'));
    try {
      await writeTask(proc, 100, 5_000_000, 10, 0);
      await writeTask(proc, 200, 1_000_000, 4, 1);
      await writeFile(join(proc, 'uptime'), '1.0 1.0\n');
      const read = createTaskReader(proc);
      const byPid = (ts: TaskCounters[] | null) => new Map((ts ?? []).map((t) => [t.pid, t]));
      const first = byPid(read());
      assert.deepEqual(first.get(100), { pid: 100, runUs: 5000, sleeps: 10, cpu: 0, startS: 0.12 });
      assert.deepEqual(first.get(200), { pid: 200, runUs: 1000, sleeps: 4, cpu: 1, startS: 0.12 });
      // Its status changes but it did not run (schedstat the same): not read again.
      await writeFile(join(proc, '200', 'status'), 'voluntary_ctxt_switches:\t99\n');
      // This one ran and slept twice more.
      await writeTask(proc, 100, 9_000_000, 12, 1);
      const second = byPid(read());
      assert.equal(second.get(200)?.sleeps, 4);
      assert.deepEqual(second.get(100), { pid: 100, runUs: 9000, sleeps: 12, cpu: 1, startS: 0.12 });
      await rm(join(proc, '200'), { recursive: true });
      assert.deepEqual([...byPid(read()).keys()], [100]);
      const limited = createTaskReader(proc, 1);
      await writeTask(proc, 300, 1_000, 1, 0);
      assert.deepEqual(
        (limited() ?? []).map((t) => t.pid),
        [300],
      );
      assert.equal(createTaskReader(join(proc, 'nope'))(), null);
    } finally {
      await rm(proc, { recursive: true, force: true });
    }
  });

  it('past its limit it watches the newest processes: one started later is read, the oldest gives up its place and its descriptors', {
    skip: process.platform !== 'linux' && 'lists its descriptors from /proc/self/fd',
  }, async () => {
    const proc = await mkdtemp(join(tmpdir(), 'powerplan-tasks-'));
    try {
      for (const pid of [10, 20, 30]) await writeTask(proc, pid, 1_000_000, 1, 0);
      const read = createTaskReader(proc, 3);
      const pids = () => (read() ?? []).map((t) => t.pid);
      assert.deepEqual(pids(), [30, 20, 10]);
      // Three descriptors each (schedstat, status, stat), kept open between reads.
      assert.deepEqual(openUnder(proc), [10, 10, 10, 20, 20, 20, 30, 30, 30]);
      // Two connections open while the three live: they are read, 10 and 20 are dropped and closed.
      await writeTask(proc, 40, 2_000_000, 5, 1);
      await writeTask(proc, 50, 3_000_000, 7, 1);
      const after = read() ?? [];
      assert.deepEqual(
        after.map((t) => [t.pid, t.runUs, t.sleeps, t.cpu]),
        [
          [50, 3000, 7, 1],
          [40, 2000, 5, 1],
          [30, 1000, 1, 0],
        ],
      );
      assert.deepEqual(openUnder(proc), [30, 30, 30, 40, 40, 40, 50, 50, 50]);
      // One ends: the newest of the rest takes its place again.
      await rm(join(proc, '50'), { recursive: true });
      assert.deepEqual(pids(), [40, 30, 20]);
      assert.deepEqual(openUnder(proc), [20, 20, 20, 30, 30, 30, 40, 40, 40]);
      // One that cannot be read takes no place.
      await mkdir(join(proc, '60'));
      assert.deepEqual(pids(), [40, 30, 20]);
    } finally {
      await rm(proc, { recursive: true, force: true });
    }
  });

  const snap = (
    atS: number,
    wakeups: number,
    busyUs: number,
    tasks: TaskCounters[] | null,
  ): IdleSnapshot => ({
    source: 'interrupts',
    busyTickHz: null,
    atS,
    cpus: [
      { cpu: 0, busyUs, totalUs: atS * 1e6, idleUs: atS * 1e6 - busyUs, states: [], wakeups },
      { cpu: 1, busyUs: 0, totalUs: atS * 1e6, idleUs: atS * 1e6, states: [], wakeups: 0 },
    ],
    tasks,
  });

  it('wake-ups that carry no work end no burst: 5 queries a second among 100 wake-ups are 5 bursts; the client blips ride along', () => {
    // Over 10 s on CPU 0: 1,000 wake-ups; a backend ran 50 bursts of 10 ms; its client 100 of 30 us.
    const before = snap(10, 0, 0, [
      { pid: 10, runUs: 0, sleeps: 0, cpu: 0 },
      { pid: 11, runUs: 0, sleeps: 0, cpu: 0 },
    ]);
    const after = snap(20, 1000, 503_000, [
      { pid: 10, runUs: 500_000, sleeps: 50, cpu: 0 },
      { pid: 11, runUs: 3000, sleeps: 100, cpu: 0 },
      // Born in the window: all of its count is the window's.
      { pid: 12, runUs: 20_000, sleeps: 2, cpu: 0 },
    ]);
    const o = observe(before, after, 'previous-read');
    assert.equal(o.idleEntriesPerSecond, 100);
    // Processes of bursts of 1 ms or more do the work: 50 + 2 = 52 bursts in 10 s; the client's
    // 100 blips of 30 us end none.
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.workBurstsPerSecond, 5.2);
    assert.equal(o.perCpu.find((c) => c.cpu === 1)?.workBurstsPerSecond, 0);
    assert.equal(o.workBurstsPerSecond, 5.2);
    assert.equal(o.workCoveredShare, 1);
    // Counted by the sleeps of the processes of long bursts, not in units.
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.workInUnits, false);
    // Their work is 520 ms of the 503 ms busy (born in the window, pid 12 counts whole): all of
    // it; the client's 3 ms are not the bursts', and nothing ran without sleeping.
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.burstWorkShare, 1);
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.sleeplessWorkShare, 0);
    // A CPU's bursts are at most its wake-ups.
    const few = observe(before, snap(20, 20, 503_000, after.tasks!), 'previous-read');
    assert.equal(few.perCpu.find((c) => c.cpu === 0)?.workBurstsPerSecond, 2);
  });

  it('work made of short requests only: each process counts its CPU in units of 1 ms where its bursts are shorter', () => {
    // 2,000 point queries of 300 us in 10 s, a timer of 20 us 100 times: no process of long bursts.
    const before = snap(10, 0, 0, [
      { pid: 10, runUs: 0, sleeps: 0, cpu: 0 },
      { pid: 11, runUs: 0, sleeps: 0, cpu: 0 },
    ]);
    const after = snap(20, 3000, 602_000, [
      { pid: 10, runUs: 600_000, sleeps: 2000, cpu: 0 },
      { pid: 11, runUs: 2000, sleeps: 100, cpu: 0 },
    ]);
    // 600 + 2 units of 1 ms in 10 s, said to be units (pieces of longer busy periods to the model).
    const o = observe(before, after, 'previous-read');
    assert.equal(o.workBurstsPerSecond, 60.2);
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.workInUnits, true);
    // Counted in units, every process that slept makes them: all of the busy time.
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.burstWorkShare, 1);
    // A process of long bursts doing less than half the work does not take over the count.
    const mixed = snap(20, 3000, 622_000, [
      { pid: 10, runUs: 600_000, sleeps: 2000, cpu: 0 },
      { pid: 11, runUs: 22_000, sleeps: 2, cpu: 0 },
    ]);
    assert.equal(observe(before, mixed, 'previous-read').workBurstsPerSecond, 60.2);
  });

  it('a process that never sleeps (a batch job, preempted only) does not tip the count: the long bursts still do most of the work that waits', () => {
    // Over 10 s: a backend of 50 bursts of 2.5 ms, a client of 100 blips, and a spinner that ran
    // 300 ms without ever going to sleep (more than the backend and the client together).
    const before = snap(10, 0, 0, [
      { pid: 10, runUs: 0, sleeps: 0, cpu: 0 },
      { pid: 11, runUs: 0, sleeps: 0, cpu: 0 },
      { pid: 12, runUs: 0, sleeps: 0, cpu: 0 },
    ]);
    const after = snap(20, 400, 428_000, [
      { pid: 10, runUs: 125_000, sleeps: 50, cpu: 0 },
      { pid: 11, runUs: 3000, sleeps: 100, cpu: 0 },
      { pid: 12, runUs: 300_000, sleeps: 0, cpu: 0 },
    ]);
    // The backend's 50 bursts, not 50 + 3 units of the client's blips.
    const o = observe(before, after, 'previous-read');
    assert.equal(o.workBurstsPerSecond, 5);
    // Of the 428 ms busy, the backend ran 125 (its bursts'), the spinner 300 without sleeping.
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.burstWorkShare, 0.2921);
    assert.equal(o.perCpu.find((c) => c.cpu === 0)?.sleeplessWorkShare, 0.7009);
    // The same spinner sleeping once in the window is a process of long bursts of its own.
    const sleeping = snap(20, 400, 428_000, [
      after.tasks![0]!,
      after.tasks![1]!,
      { ...after.tasks![2]!, sleeps: 1 },
    ]);
    assert.equal(observe(before, sleeping, 'previous-read').workBurstsPerSecond, 5.1);
  });

  it("a process watched only since it took a newer one's place sits the window out; one started in the window counts whole", () => {
    const before = snap(10, 0, 0, [{ pid: 50, runUs: 0, sleeps: 0, cpu: 0 }]);
    const after = snap(20, 1000, 500_000, [
      { pid: 50, runUs: 400_000, sleeps: 40, cpu: 0, startS: 9 },
      // Started at boot, running for hours, first read now: its lifetime is not this window's.
      { pid: 30, runUs: 3_600_000_000, sleeps: 900_000, cpu: 0, startS: 0.5 },
      // Started 5 s into the window.
      { pid: 60, runUs: 100_000, sleeps: 10, cpu: 0, startS: 15 },
    ]);
    const o = observe(before, after, 'previous-read');
    assert.equal(o.workCoveredShare, 1);
    assert.equal(o.workBurstsPerSecond, 5);
    // Against boot every process did all of its counting in the window: its 1000 wake-ups in 20 s bound them.
    assert.equal(observe(null, after, 'boot').workBurstsPerSecond, 50);
  });

  it('processes that cover too little of the busy time (a threaded server) give no bursts; nor does a read without processes', () => {
    const before = snap(10, 0, 0, [{ pid: 10, runUs: 0, sleeps: 0, cpu: 0 }]);
    const after = snap(20, 1000, 500_000, [{ pid: 10, runUs: 100_000, sleeps: 50, cpu: 0 }]);
    const o = observe(before, after, 'previous-read');
    assert.ok(0.2 < MIN_WORK_COVERAGE);
    assert.equal(o.workBurstsPerSecond, null);
    assert.equal(o.workCoveredShare, 0.2);
    assert.equal(o.perCpu[0]?.workInUnits, undefined);
    // A third or more (interrupts and kernel work take the rest): the bursts count.
    const most = observe(
      before,
      snap(20, 1000, 500_000, [{ pid: 10, runUs: 200_000, sleeps: 50, cpu: 0 }]),
      'previous-read',
    );
    assert.equal(most.workCoveredShare, 0.4);
    assert.equal(most.workBurstsPerSecond, 5);
    assert.equal(
      observe(snap(10, 0, 0, null), snap(20, 1000, 500_000, null), 'previous-read').workBurstsPerSecond,
      null,
    );
  });
});
