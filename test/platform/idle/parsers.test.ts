/**
 * The idle-state and processor-control parsers on real captures: Linux cpuidle trees (this
 * machine's haltpoll states, two intel_idle listings rebuilt as trees), PM QoS limits, Windows
 * Kernel-Processor-Power events (a VM's event 55 export, and event 37 as wevtutil prints it),
 * tuned's verify log lines and the processor idle setting in a real `powercfg /q` dump.
 */
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { linuxControl, parseDmaLatency, readIdleStates } from '../../../src/platform/linux/cpuidle.ts';
import { parseTunedLog } from '../../../src/platform/linux/effective.ts';
import { readSysfs } from '../../../src/platform/linux/sysfs.ts';
import {
  firmwareLimits,
  groupCapabilities,
  parseEvents,
  windowsControl,
} from '../../../src/platform/windows/events.ts';
import { parseQuery } from '../../../src/platform/windows/parse.ts';
import { SETTING } from '../../../src/platform/windows/well-known.ts';

const fixtures = join(import.meta.dirname, '..', '..', 'fixtures');
const tree = (name: string) => join(fixtures, 'linux-cpuidle', name);

describe('Linux cpuidle from sysfs trees', () => {
  it("lists this machine's captured haltpoll states with counters and the share of idle time", async () => {
    const idle = await readIdleStates({ sysfsRoot: tree('kvm-haltpoll-debian12'), dmaLatencyPath: null });
    assert.equal(idle.source, 'cpuidle');
    assert.equal(idle.driver, 'haltpoll');
    assert.equal(idle.governor, 'haltpoll');
    assert.equal(idle.cpus, 2);
    assert.deepEqual(
      idle.states.map((s) => [s.index, s.name, s.exitLatencyUs, s.targetResidencyUs, s.disabled]),
      [
        [0, 'POLL', 0, 0, false],
        [1, 'haltpoll idle', 1, 1, false],
      ],
    );
    assert.equal(idle.states[0]?.description, 'CPUIDLE CORE POLL IDLE');
    const shares = idle.states.map((s) => s.timeShare ?? 0);
    assert.ok(Math.abs(shares.reduce((a, b) => a + b, 0) - 1) < 0.001, 'shares add up to all idle time');
    assert.ok((idle.states[1]?.usage ?? 0) > 0 && (idle.states[1]?.timeUs ?? 0) > 0, 'counters summed');
    assert.equal(idle.deepestEnabled?.name, 'haltpoll idle');
    assert.deepEqual(idle.pmQos, { cpuDmaLatencyUs: null, resumeLatencyUs: 0, limited: false });
  });

  it('reads an intel_idle tree without counters or disable files as "not exposed"', async () => {
    const idle = await readIdleStates({
      sysfsRoot: tree('intel-idle-acpi-i5-10600k-DERIVED'),
      dmaLatencyPath: null,
    });
    assert.equal(idle.driver, 'intel_idle');
    assert.equal(idle.governor, null);
    assert.deepEqual(
      idle.states.map((s) => [s.name, s.exitLatencyUs, s.targetResidencyUs]),
      [
        ['POLL', 0, 0],
        ['C1_ACPI', 1, 1],
        ['C2_ACPI', 120, 360],
        ['C3_ACPI', 1034, 3102],
      ],
    );
    assert.ok(idle.states.every((s) => s.usage === null && s.timeShare === null && !s.disabled));
    assert.equal(idle.deepestEnabled?.exitLatencyUs, 1034);
    assert.equal(idle.pmQos, null);
  });

  it('skips a disabled C6: the deepest state in use is C1E', async () => {
    const idle = await readIdleStates({
      sysfsRoot: tree('intel-idle-c6-disabled-cpupower-DERIVED'),
      dmaLatencyPath: null,
    });
    const c6 = idle.states.find((s) => s.name === 'C6');
    assert.equal(c6?.disabled, true);
    assert.equal(c6?.exitLatencyUs, 92);
    assert.equal(idle.deepestEnabled?.name, 'C1E');
    assert.ok(
      (idle.states.find((s) => s.name === 'C1')?.timeShare ?? 0) > 0.999,
      'C1 holds almost all idle time',
    );
  });

  it('a PM QoS limit of 0 forbids every state but POLL; per-CPU disables are named', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-i24-idle-'));
    try {
      await cp(tree('kvm-haltpoll-debian12'), dir, { recursive: true });
      const dma = join(dir, 'cpu_dma_latency');
      const zero = Buffer.alloc(4);
      await writeFile(dma, zero);
      await writeFile(join(dir, 'devices/system/cpu/cpu1/cpuidle/state1/disable'), '1\n');
      const idle = await readIdleStates({ sysfsRoot: dir, dmaLatencyPath: dma });
      assert.deepEqual(idle.pmQos, { cpuDmaLatencyUs: 0, resumeLatencyUs: 0, limited: true });
      assert.equal(idle.deepestEnabled?.name, 'POLL');
      assert.deepEqual(idle.states[1]?.disabledOnCpus, [1]);
      assert.equal(idle.states[1]?.disabled, false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads /dev/cpu_dma_latency values as the kernel writes them', () => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(2_000_000_000);
    assert.equal(parseDmaLatency(b), 2_000_000_000);
    assert.equal(parseDmaLatency(Buffer.from('0x00000014\n')), 20);
    assert.equal(parseDmaLatency(Buffer.from('')), null);
  });

  it('on this machine: the real cpuidle driver and its states', async (t) => {
    const idle = await readIdleStates({ sysfsRoot: '/sys', dmaLatencyPath: '/dev/cpu_dma_latency' });
    if (idle.source === 'none') return t.skip('no cpuidle here');
    assert.ok(idle.states.length > 0);
    assert.ok(idle.states.every((s) => s.exitLatencyUs !== null));
    if (process.getuid?.() === 0)
      assert.notEqual(idle.pmQos?.cpuDmaLatencyUs ?? null, null, 'root reads PM QoS');
  });

  it('control: no cpufreq in a VM means the hypervisor decides; idle choice needs two states', async () => {
    const root = tree('kvm-haltpoll-debian12');
    const idle = await readIdleStates({ sysfsRoot: root, dmaLatencyPath: null });
    const control = await linuxControl(await readSysfs(root), idle, 'kvm');
    assert.equal(control.decidedBy, 'hypervisor');
    assert.equal(control.clockControl, false);
    assert.equal(control.idleControl, true);
    assert.ok(control.evidence.some((e) => e.source === 'cpufreq' && /hypervisor/.test(e.text)));
    const bare = await linuxControl(await readSysfs(root), idle, null);
    assert.equal(bare.decidedBy, 'firmware');
  });

  it('control: intel_pstate status, no_turbo and a bios_limit below the maximum are evidence', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-i24-ctl-'));
    try {
      await cp(join(fixtures, 'linux-sysfs', 'tlp-derived-plasma-pstate31'), dir, { recursive: true });
      await mkdir(join(dir, 'devices/system/cpu/intel_pstate'), { recursive: true });
      await writeFile(join(dir, 'devices/system/cpu/intel_pstate/status'), 'active\n');
      await writeFile(join(dir, 'devices/system/cpu/intel_pstate/no_turbo'), '1\n');
      const s = await readSysfs(dir);
      const c0 = s.cpus[0]!;
      await writeFile(
        join(c0.dir, 'bios_limit'),
        `${Math.round((c0.hwMaxKHz ?? c0.maxKHz ?? 2_000_000) / 2)}\n`,
      );
      const idle = await readIdleStates({ sysfsRoot: dir, dmaLatencyPath: null });
      const control = await linuxControl(await readSysfs(dir), idle, null);
      assert.equal(control.decidedBy, 'firmware');
      assert.ok(control.evidence.some((e) => e.source === 'cpufreq/bios_limit'));
      assert.ok(control.evidence.some((e) => e.source === 'intel_pstate/status' && e.value === 'active'));
      assert.ok(control.evidence.some((e) => e.source === 'intel_pstate/no_turbo'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Windows Kernel-Processor-Power events', () => {
  const file = join(fixtures, 'wevtutil', 'en-US-ws2012-eval-vm-event55-EXCERPT.txt');

  it("reads a VM's event 55: one idle state, no performance control, so the hypervisor decides", async () => {
    for (const text of [
      await readFile(file, 'utf8'),
      (await readFile(file, 'utf8')).replace(/\n/g, '\r\n'),
    ]) {
      const events = parseEvents(text);
      assert.equal(events.length, 8);
      const [g] = groupCapabilities(events);
      assert.deepEqual(g, {
        group: 0,
        processor: 7,
        time: '2021-01-20T13:56:59.294Z',
        idleStateCount: 1,
        idleImplementation: 1,
        performanceImplementation: 0,
        nominalFrequencyMHz: 2994,
        maximumPerformancePercent: 100,
        minimumPerformancePercent: 100,
        minimumThrottlePercent: 100,
      });
      const control = windowsControl(events, 'oracle');
      assert.equal(control.decidedBy, 'hypervisor');
      assert.equal(control.clockControl, false);
      assert.equal(control.idleControl, false);
      assert.equal(windowsControl(events, null).decidedBy, 'firmware');
    }
  });

  it('reads event 37 as wevtutil prints it (one line per event) and says the firmware caps the speed', () => {
    const one = (n: number, time: string, secs: number) =>
      `<Event xmlns='http://schemas.microsoft.com/win/2004/08/events/event'><System><Provider Name='Microsoft-Windows-Kernel-Processor-Power' Guid='{0f67e49f-fe51-4e9f-b490-6f2948cc6027}'/><EventID>37</EventID><TimeCreated SystemTime='${time}'/></System><EventData><Data Name='Group'>0</Data><Data Name='Number'>${n}</Data><Data Name='CapDurationInSeconds'>${secs}</Data><Data Name='PpcChanges'>0</Data><Data Name='TpcChanges'>0</Data><Data Name='PccChanges'>2</Data></EventData></Event>`;
    const events = parseEvents(
      [one(3, '2024-05-01T10:00:00.000Z', 71), one(1, '2024-05-01T11:00:00.000Z', 12)].join('\r\n'),
    );
    assert.deepEqual(firmwareLimits(events), [
      { group: 0, processor: 1, time: '2024-05-01T11:00:00.000Z', seconds: 12 },
      { group: 0, processor: 3, time: '2024-05-01T10:00:00.000Z', seconds: 71 },
    ]);
    const control = windowsControl(events, null);
    assert.equal(control.decidedBy, 'firmware');
    assert.equal(control.firmwareLimits?.length, 2);
  });

  it('an unreadable log leaves control unknown, with the reason', () => {
    const control = windowsControl(null, null, 'Access is denied.');
    assert.equal(control.decidedBy, 'unknown');
    assert.match(control.evidence[0]!.text, /Access is denied/);
  });

  it('ignores other providers and malformed events', () => {
    assert.deepEqual(
      parseEvents("<Event><System><Provider Name='Other'/><EventID>55</EventID></System></Event><Event>"),
      [],
    );
  });

  it('finds the processor idle disable setting in a real powercfg /q dump', async () => {
    const q = parseQuery(
      await readFile(join(fixtures, 'powercfg-query', 'en-GB-melon-readme-q-full-MelonV3.txt'), 'utf8'),
    );
    const idle = q.settings.find((s) => s.id === SETTING.idleDisable);
    assert.deepEqual([idle?.ac, idle?.dc], [0, 0]);
  });
});

describe("tuned's verify log", () => {
  it('turns failed verifications and unknown options into mismatches, from the last profile switch on', () => {
    const log = [
      "2024-05-01 10:00:00,000 ERROR    tuned.plugins.base: verify: failed: 'old' = '1', expected '2'",
      '2024-05-01 10:01:00,000 INFO     tuned.profiles.loader: loading profile: latency-performance',
      "2024-05-01 10:01:00,001 WARNING  tuned.plugins.base: Unknown option 'min_pef_pct' for plugin 'CPULatencyPlugin'.",
      "2024-05-01 10:01:00,002 INFO     tuned.daemon.daemon: static tuning from profile 'latency-performance' applied",
      "2024-05-01 10:01:05,000 ERROR    tuned.plugins.base: verify: failed: device cpu0: 'governor' = 'powersave', expected 'performance'",
      "2024-05-01 10:01:05,001 INFO     tuned.plugins.base: verify: passed: 'force_latency' = '1'",
    ].join('\n');
    const m = parseTunedLog(log);
    assert.deepEqual(
      m.map((x) => [x.setting, x.wanted, x.got]),
      [
        ['min_pef_pct', 'set by the profile', null],
        ['governor (cpu0)', 'performance', 'powersave'],
      ],
    );
    assert.match(m[0]!.cause, /misspelled/);
  });
});
