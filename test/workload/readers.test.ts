import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CpuCounters, IdleSnapshot } from '../../src/domain/workload.ts';
import { observe } from '../../src/platform/idle-delta.ts';
import { readIdleStates } from '../../src/platform/linux/cpuidle.ts';
import {
  busyTickHzOf,
  createLinuxIdleReader,
  parseInterrupts,
  parseProcStat,
} from '../../src/platform/linux/idle-counters.ts';

const fixtures = join(import.meta.dirname, '..', 'fixtures');
const psci = join(fixtures, 'linux-cpuidle', 'arm-psci-multiple-drivers-DERIVED');
const firecracker = join(fixtures, 'linux-proc', 'firecracker-2cpu');

describe('idle readers that hold on every kernel', () => {
  it('a per-CPU driver (psci_idle) is the driver; a state without `name`, a `<null>` desc and a state disabled in `flags` are read as such', async () => {
    const idle = await readIdleStates({ sysfsRoot: psci, dmaLatencyPath: null });
    assert.equal(idle.source, 'cpuidle');
    assert.equal(idle.driver, 'psci_idle');
    assert.equal(idle.cpus, 2);
    assert.deepEqual(
      idle.states.map((s) => [s.name, s.description, s.exitLatencyUs, s.disabled]),
      [
        ['WFI', 'ARM WFI', 1, false],
        ['cpu-sleep-0', 'cpu-sleep-0', 150, false],
        ['cluster-sleep-0', null, 800, true],
      ],
    );
    // The deepest state in use is the one flags do not disable.
    assert.equal(idle.deepestEnabled?.name, 'cpu-sleep-0');
    // cpu1's nameless state1 still counts.
    assert.equal(idle.states[1]!.usage, 300 + 301);
  });

  it('the live reader names a nameless state by its directory and reads the disabled flag', async () => {
    const proc = await mkdtemp(join(tmpdir(), 'powerplan-proc-'));
    try {
      await writeFile(join(proc, 'uptime'), '12.50 3.00\n');
      await writeFile(
        join(proc, 'stat'),
        'cpu  2 0 0 2 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\n',
      );
      const snap = await createLinuxIdleReader({ sysfsRoot: psci, procfsRoot: proc })();
      assert.equal(snap.source, 'cpuidle');
      assert.equal(snap.atS, 12.5);
      assert.deepEqual(
        snap.cpus.map((c) => c.states.map((s) => `${s.name}${s.disabled ? ' (disabled)' : ''}`)),
        [
          ['WFI', 'cpu-sleep-0', 'cluster-sleep-0 (disabled)'],
          ['WFI', 'state1', 'cluster-sleep-0 (disabled)'],
        ],
      );
      assert.deepEqual(snap.cpus[0]!.states[1], {
        name: 'cpu-sleep-0',
        exitLatencyUs: 150,
        usage: 300,
        timeUs: 900_000,
        above: 7,
        below: 0,
        disabled: false,
      });
    } finally {
      await rm(proc, { recursive: true, force: true });
    }
  });

  it("reads this machine's /proc/stat: busy, idle and all time per CPU in us", async () => {
    const cpus = parseProcStat(await readFile(join(firecracker, 'stat'), 'utf8'));
    assert.deepEqual(
      cpus.map((c) => c.cpu),
      [0, 1],
    );
    // cpu0 250988 1269 31808 15257 268 0 184 596: busy = user+nice+system+irq+softirq; idle+iowait; + steal.
    assert.deepEqual(cpus[0], {
      cpu: 0,
      busyUs: 284_249 * 10_000,
      idleUs: 15_525 * 10_000,
      totalUs: 300_370 * 10_000,
    });
  });

  it("reads this machine's /proc/interrupts per CPU, skipping the one-total ERR and MIS lines", async () => {
    const sums = parseInterrupts(await readFile(join(firecracker, 'interrupts'), 'utf8'));
    assert.deepEqual(
      [...sums],
      [
        [0, 3_983_907],
        [1, 4_477_632],
      ],
    );
  });

  it('without a cpuidle driver the wake-ups are the interrupts taken; the mean idle period is idle time per wake-up', async () => {
    const root = await mkdtemp(join(tmpdir(), 'powerplan-noidle-'));
    try {
      await cp(firecracker, join(root, 'proc'), { recursive: true });
      await writeFile(join(root, 'proc', 'uptime'), '100.00 0.00\n');
      const read = createLinuxIdleReader({ sysfsRoot: join(root, 'sys'), procfsRoot: join(root, 'proc') });
      const a = await read();
      assert.equal(a.source, 'interrupts');
      assert.equal(a.cpus[1]!.wakeups, 4_477_632);
      const b = structuredClone(a);
      b.atS = 110;
      b.cpus[0]!.wakeups! += 10_000;
      b.cpus[0]!.busyUs! += 4_000_000;
      b.cpus[0]!.idleUs! += 6_000_000;
      b.cpus[0]!.totalUs! += 10_000_000;
      const o = observe(a, b, 'previous-read');
      // cpu1 did nothing at all in these 10 s: it counts, with no work and no wake-ups.
      assert.equal(o.cpus, 2);
      assert.equal(o.idleEntriesPerSecond, 1000);
      assert.equal(o.meanIdlePeriodUs, 600);
      assert.equal(o.meanBusyPeriodUs, 400);
      assert.equal(o.busyShare, 0.4);
      assert.deepEqual(o.perCpu[0], {
        cpu: 0,
        busyShare: 0.4,
        idleEntriesPerSecond: 1000,
        meanIdlePeriodUs: 600,
        // The fixture's procfs lists no process: no bursts of work counted.
        workBurstsPerSecond: null,
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("on a tickless-idle kernel the ticks of busy time are no wake-ups: the kernel's HZ from its configuration", async () => {
    assert.equal(busyTickHzOf('CONFIG_NO_HZ_IDLE=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n'), 250);
    assert.equal(
      busyTickHzOf('CONFIG_HZ_PERIODIC=y\nCONFIG_HZ=1000\n'),
      null,
      'a periodic tick runs in idle too',
    );
    assert.equal(busyTickHzOf('# CONFIG_NO_HZ_IDLE is not set\nCONFIG_HZ=100\n'), null);
    assert.equal(busyTickHzOf(null), null);
    const root = await mkdtemp(join(tmpdir(), 'powerplan-hz-'));
    try {
      await cp(firecracker, join(root, 'proc'), { recursive: true });
      await mkdir(join(root, 'proc', 'sys', 'kernel'), { recursive: true });
      await writeFile(join(root, 'proc', 'sys', 'kernel', 'osrelease'), '6.1.0-test\n');
      await mkdir(join(root, 'boot'));
      await writeFile(join(root, 'boot', 'config-6.1.0-test'), 'CONFIG_NO_HZ_IDLE=y\nCONFIG_HZ=250\n');
      const read = createLinuxIdleReader({
        sysfsRoot: join(root, 'sys'),
        procfsRoot: join(root, 'proc'),
        bootRoot: join(root, 'boot'),
      });
      const a = await read();
      assert.equal(a.busyTickHz, 250);
      const b = structuredClone(a);
      b.atS = a.atS + 10;
      b.cpus[0]!.wakeups! += 10_000;
      b.cpus[0]!.busyUs! += 4_000_000;
      b.cpus[0]!.idleUs! += 6_000_000;
      b.cpus[0]!.totalUs! += 10_000_000;
      const o = observe(a, b, 'previous-read');
      // 4 s busy at 250 Hz: 1000 of the 10,000 interrupts were ticks.
      assert.equal(o.perCpu[0]!.idleEntriesPerSecond, 900);
      assert.equal(o.meanBusyPeriodUs, Math.round((4_000_000 / 9000) * 10) / 10);
      // Without the configuration (a fixture's /proc, no /boot file) nothing is taken off.
      const plain = createLinuxIdleReader({ sysfsRoot: join(root, 'sys'), procfsRoot: firecracker });
      assert.equal((await plain()).busyTickHz, null);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('asked for some CPUs, the observation is of those only: busy time, idle entries, states, per CPU and the bursts of the processes that ran there', () => {
    // CPU c, `s` seconds into the counting: after 10 s busy (c + 1) s; POLL 100 x (c + 1) entries of 10 us; C1 1000 x (c + 1) entries taking the rest.
    const cpu = (c: number, s: number): CpuCounters => {
      const k = s === 0 ? 0 : c + 1;
      return {
        cpu: c,
        busyUs: k * 1e6,
        totalUs: s * 1e6,
        idleUs: s * 1e6 - k * 1e6,
        wakeups: null,
        states: [
          {
            name: 'POLL',
            exitLatencyUs: 0,
            usage: 100 * k,
            timeUs: 1000 * k,
            above: 0,
            below: 0,
            disabled: false,
          },
          {
            name: 'C1',
            exitLatencyUs: 8,
            usage: 1000 * k,
            timeUs: s * 1e6 - k * 1e6 - 1000 * k,
            above: k,
            below: 2 * k,
            disabled: false,
          },
        ],
      };
    };
    const snap = (s: number): IdleSnapshot => ({
      source: 'cpuidle',
      atS: 100 + s,
      cpus: [0, 1, 2].map((c) => cpu(c, s)),
      // One process per CPU, each 40 sleeps in the window over 90% of its CPU's busy time.
      tasks: [0, 1, 2].map((c) => ({
        pid: 100 + c,
        runUs: s === 0 ? 0 : 0.9 * (c + 1) * 1e6,
        sleeps: s === 0 ? 0 : 40,
        cpu: c,
      })),
    });
    const before = snap(0);
    const after = snap(10);
    const all = observe(before, after, 'previous-read');
    assert.equal(all.cpus, 3);
    assert.equal(all.cpuSet, undefined);
    assert.equal(all.busySeconds, 6);
    const some = observe(before, after, 'previous-read', [0, 2]);
    assert.equal(some.cpus, 2);
    assert.equal(some.cpuSet, '0,2');
    // CPU 0 busy 1 s and CPU 2 3 s, of 20 s.
    assert.equal(some.busySeconds, 4);
    assert.equal(some.busyShare, 0.2);
    // (1100 + 3300) entries in 10 s.
    assert.equal(some.idleEntriesPerSecond, 440);
    assert.deepEqual(
      some.states.map((s) => [s.name, s.entriesPerSecond, s.above, s.below]),
      [
        ['POLL', 40, 0, 0],
        ['C1', 400, 4, 8],
      ],
    );
    assert.equal(some.meanIdlePeriodUs, Math.round((16e6 / 4400) * 10) / 10);
    assert.deepEqual(
      some.perCpu.map((c) => [c.cpu, c.busyShare, c.idleEntriesPerSecond, c.workBurstsPerSecond]),
      [
        [2, 0.3, 330, 4],
        [0, 0.1, 110, 4],
      ],
    );
    // The processes on CPUs 0 and 2 only: 80 sleeps in 10 s, over 0.9 of those CPUs' busy time.
    assert.equal(some.workBurstsPerSecond, 8);
    assert.equal(some.workCoveredShare, 0.9);
    // A CPU asked for that the counters do not know is not observed, and not said to be.
    const one = observe(before, after, 'previous-read', [1, 5]);
    assert.equal(one.cpuSet, '1');
    assert.equal(one.cpus, 1);
    assert.equal(one.busySeconds, 2);
    // /proc/stat's idle falling behind (CPU 0 counting 7 s of its 9 s idle, as under a quota that
    // holds a group back): its busy share is of its busy time and the idle its states counted, 1 s
    // of 10 s, not of /proc/stat's short total (1 s of 8 s).
    const lagging = {
      ...after,
      cpus: after.cpus.map((c) => (c.cpu === 0 ? { ...c, idleUs: 7e6, totalUs: 8e6 } : c)),
    };
    const lag = observe(before, lagging, 'previous-read', [0]);
    assert.equal(lag.busyShare, 0.1);
    assert.equal(lag.perCpu[0]!.busyShare, 0.1);
    assert.equal(lag.busySeconds, 1);
  });

  it('a CPU whose counters went back (hot-plug, reset) is left out of the window, not read as negative', async () => {
    const proc = await mkdtemp(join(tmpdir(), 'powerplan-proc-'));
    try {
      await cp(firecracker, proc, { recursive: true });
      const read = createLinuxIdleReader({ sysfsRoot: join(proc, 'none'), procfsRoot: proc });
      const a = await read();
      const b = structuredClone(a);
      b.atS += 5;
      b.cpus[1]!.wakeups = 3;
      const o = observe(a, b, 'previous-read');
      assert.equal(o.cpus, 1);
      assert.ok((o.idleEntriesPerSecond ?? 0) >= 0);
    } finally {
      await rm(proc, { recursive: true, force: true });
    }
  });
});
