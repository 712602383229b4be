import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  parsePpdGet,
  parsePpdList,
  parseTunedActive,
  parseTunedList,
  polkitActionOf,
} from '../../../src/platform/linux/parsers.ts';
import { readSysfs } from '../../../src/platform/linux/sysfs.ts';
import { build, fixtures, rockyTunedProfiles } from './harness.ts';

const fixture = (folder: string, name: string) => readFile(join(fixtures, folder, name), 'utf8');
const crlf = (s: string) => s.replace(/\n/g, '\r\n');

describe('tuned-adm parsers (captured on Rocky Linux)', () => {
  it('list: 14 padded profiles with descriptions and the active one', async () => {
    for (const text of [
      await fixture('linux-tuned', 'rocky-tuned-adm-list-virtual-guest.txt'),
      crlf(await fixture('linux-tuned', 'rocky-tuned-adm-list-virtual-guest.txt')),
    ]) {
      const list = parseTunedList(text);
      assert.equal(list.profiles.length, 14);
      assert.deepEqual(list.profiles[0], {
        name: 'accelerator-performance',
        description: 'Throughput performance based tuning with disabled higher latency STOP states',
      });
      assert.equal(list.profiles.at(-1)?.name, 'virtual-host');
      assert.equal(list.active, 'virtual-guest');
    }
  });

  it('active: the profile name', async () => {
    assert.equal(
      parseTunedActive(await fixture('linux-tuned', 'rocky-tuned-adm-active-virtual-guest.txt')),
      'virtual-guest',
    );
  });

  it('active with the daemon not running: no profile', async () => {
    assert.equal(
      parseTunedActive(await fixture('linux-tuned', 'rocky-tuned-adm-active-daemon-not-running.txt')),
      null,
    );
  });

  it('recommend: a bare profile name is not mistaken for an active profile', async () => {
    assert.equal(parseTunedActive(await fixture('linux-tuned', 'rocky-tuned-adm-recommend.txt')), null);
  });
});

describe('powerprofilesctl parsers', () => {
  it('old format (0.10): Driver, degraded performance active', async () => {
    const text = await fixture('linux-ppd', 'ppd-0.10-list-degraded-intel.txt');
    for (const t of [text, crlf(text)]) {
      const profiles = parsePpdList(t);
      assert.deepEqual(
        profiles.map((p) => [p.name, p.active]),
        [
          ['performance', true],
          ['balanced', false],
          ['power-saver', false],
        ],
      );
      assert.deepEqual(profiles[0]!.drivers, { Driver: 'intel_pstate' });
      assert.deepEqual(profiles[0]!.degraded, { degraded: true, reason: 'high-operating-temperature' });
      assert.equal(profiles[1]!.degraded, null);
    }
  });

  it('new format (0.20+): CpuDriver / PlatformDriver after a TAB, power-saver active', async () => {
    const profiles = parsePpdList(
      await fixture('linux-ppd', 'ppd-list-cpudriver-platformdriver-power-saver-active.txt'),
    );
    assert.deepEqual(
      profiles.map((p) => [p.name, p.active]),
      [
        ['performance', false],
        ['balanced', false],
        ['power-saver', true],
      ],
    );
    assert.deepEqual(profiles[2]!.drivers, { CpuDriver: 'intel_pstate', PlatformDriver: 'platform_profile' });
    assert.deepEqual(profiles[0]!.degraded, { degraded: false, reason: null });
  });

  it('get: the profile name', async () => {
    assert.equal(
      parsePpdGet(await fixture('linux-ppd', 'ppd-get-performance-ubuntuforums.txt')),
      'performance',
    );
    assert.equal(parsePpdGet('balanced\r\n'), 'balanced');
  });

  it('finds the polkit action in an AccessDenied answer', () => {
    assert.equal(
      polkitActionOf(
        'Failed to communicate with power-profiles-daemon: g-dbus-error-quark: GDBus.Error:org.freedesktop.DBus.Error.AccessDenied: Not Authorized: org.freedesktop.UPower.PowerProfiles.switch-profile (9)',
      ),
      'org.freedesktop.UPower.PowerProfiles.switch-profile',
    );
    assert.equal(polkitActionOf('Unable to switch profile: Unauthorized'), null);
  });
});

describe('sysfs reader on the captured trees', () => {
  it('node_exporter tree: 4 intel_pstate CPUs on powersave, no EPP, no intel_pstate dir', async () => {
    const s = await readSysfs(join(fixtures, 'linux-sysfs', 'node-exporter-fixture-1'));
    assert.deepEqual(
      s.cpus.map((c) => [c.cpu, c.driver, c.governor]),
      [0, 1, 2, 3].map((i) => [i, 'intel_pstate', 'powersave']),
    );
    assert.deepEqual(s.cpus[0]!.governors, ['performance', 'powersave']);
    assert.equal(s.cpus[0]!.curKHz, 1699981);
    assert.equal(s.cpus[2]!.maxKHz, 4200000);
    assert.equal(s.cpus[0]!.energyPreference, null);
    assert.equal(s.intelPstate, null);
    assert.equal(s.platformProfile, null);
  });

  it('tlp-derived tree: EPP choices despite the trailing space', async () => {
    const s = await readSysfs(join(fixtures, 'linux-sysfs', 'tlp-derived-plasma-pstate31'));
    assert.deepEqual(s.cpus[0]!.energyPreferences, [
      'default',
      'performance',
      'balance_performance',
      'balance_power',
      'power',
    ]);
    assert.equal(s.cpus[0]!.energyPreference, 'performance');
    assert.equal(s.cpus[0]!.minKHz, 800000);
  });

  it('platform_profile tree: the profile and its choices, no CPUs', async () => {
    const s = await readSysfs(join(fixtures, 'linux-sysfs', 'platform-profile-lmt212'));
    assert.equal(s.platformProfile, 'balanced');
    assert.deepEqual(s.platformProfileChoices, ['low-power', 'balanced', 'performance']);
    assert.equal(s.cpus.length, 0);
  });
});

describe('emulators print the captured formats', () => {
  it('tuned-adm list reproduces the Rocky Linux capture byte for byte', async () => {
    const b = await build({ tuned: { active: 'virtual-guest', profiles: await rockyTunedProfiles() } });
    try {
      const r = await b.options.run!(join(b.dir, 'bin', 'tuned-adm'), ['list']);
      assert.equal(
        r.stdout.toString(),
        await fixture('linux-tuned', 'rocky-tuned-adm-list-virtual-guest.txt'),
      );
      assert.deepEqual(await b.calls('tuned-adm'), [['list']]);
    } finally {
      await b.cleanup();
    }
  });

  it('tuned-adm active with the daemon stopped reproduces the capture (stdout + stderr)', async () => {
    const b = await build({ tuned: { daemon: 'stopped', active: null, profiles: [] } });
    try {
      const r = await b.options.run!(join(b.dir, 'bin', 'tuned-adm'), ['active']);
      assert.equal(
        r.stderr.toString() + r.stdout.toString(),
        await fixture('linux-tuned', 'rocky-tuned-adm-active-daemon-not-running.txt'),
      );
      assert.notEqual(r.exitCode, 0);
    } finally {
      await b.cleanup();
    }
  });

  it('powerprofilesctl list reproduces the old and the new capture byte for byte', async () => {
    const cases = [
      {
        file: 'ppd-0.10-list-degraded-intel.txt',
        format: 'old' as const,
        active: 'performance',
        profiles: [
          { name: 'performance', cpuDriver: 'intel_pstate', degraded: 'high-operating-temperature' },
          { name: 'balanced', cpuDriver: 'intel_pstate' },
          { name: 'power-saver', cpuDriver: 'intel_pstate' },
        ],
      },
      {
        file: 'ppd-list-cpudriver-platformdriver-power-saver-active.txt',
        format: 'new' as const,
        active: 'power-saver',
        profiles: ['performance', 'balanced', 'power-saver'].map((name) => ({
          name,
          cpuDriver: 'intel_pstate',
          platformDriver: 'platform_profile',
        })),
      },
    ];
    for (const c of cases) {
      const b = await build({ ppd: { format: c.format, active: c.active, profiles: c.profiles } });
      try {
        const r = await b.options.run!(join(b.dir, 'bin', 'powerprofilesctl'), ['list']);
        assert.equal(r.stdout.toString(), await fixture('linux-ppd', c.file));
        const get = await b.options.run!(join(b.dir, 'bin', 'powerprofilesctl'), ['get']);
        assert.equal(get.stdout.toString(), `${c.active}\n`);
      } finally {
        await b.cleanup();
      }
    }
  });
});
