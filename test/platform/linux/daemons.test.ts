import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { buildDeps } from '../../../src/deps.ts';
import { PowerPlanError } from '../../../src/domain/errors.ts';
import { SetPlanResult } from '../../../src/domain/schemas.ts';
import { localCaller } from '../../../src/domain/scopes.ts';
import { setPowerPlan } from '../../../src/operations/set-power-plan.ts';
import type { PowerBackend } from '../../../src/platform/backend.ts';
import { resolvePlan } from '../../../src/platform/resolve.ts';
import { backendContract } from '../backend-contract.ts';
import { build, intelPstateTree, type PpdState, rockyTunedProfiles, type Setup, using } from './harness.ts';

const rocky = await rockyTunedProfiles();

/** The captured Rocky Linux tuned: 14 profiles, virtual-guest active. */
const tuned = (over: Partial<NonNullable<Setup['tuned']>> = {}): NonNullable<Setup['tuned']> => ({
  active: 'virtual-guest',
  profiles: rocky,
  ...over,
});

const ppd = (over: Partial<PpdState> = {}): PpdState => ({
  format: 'new',
  active: 'balanced',
  profiles: ['performance', 'balanced', 'power-saver'].map((name) => ({
    name,
    cpuDriver: 'intel_pstate',
    platformDriver: 'platform_profile',
  })),
  ...over,
});

backendContract('linux tuned (emulator, VM without cpufreq)', async () => build({ tuned: tuned() }), {
  settable: true,
});
backendContract(
  'linux tuned (emulator) over intel_pstate',
  async () =>
    build({ tuned: tuned({ active: 'throughput-performance' }), sysfs: { tree: intelPstateTree() } }),
  { settable: true },
);
backendContract('linux power-profiles-daemon (emulator, new format)', async () => build({ ppd: ppd() }), {
  settable: true,
});
backendContract(
  'linux power-profiles-daemon (emulator, old format, degraded)',
  async () => build({ ppd: ppd({ format: 'old', active: 'performance' }) }),
  { settable: true },
);
backendContract(
  'linux: both daemons stopped and no cpufreq (no controls)',
  async () =>
    build({
      tuned: tuned({ daemon: 'stopped', active: null }),
      ppd: ppd({ daemon: 'stopped' }),
      cpuinfo: 'flags\t\t: fpu hypervisor\n',
    }),
  { settable: false },
);

/** Runs set_power_plan the way every surface does, over this backend. */
const setPlan = async (backend: PowerBackend, plan: string, dryRun: boolean) => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-linux-state-'));
  try {
    const deps = buildDeps(loadConfig({ POWERPLAN_STATE_DIR: dir, POWERPLAN_LOG_LEVEL: 'silent' }), {
      backend,
    });
    const ctx = { ...deps, signal: new AbortController().signal, caller: localCaller, progress: () => {} };
    return SetPlanResult.parse(
      await setPowerPlan.handler(setPowerPlan.input.parse({ plan, dryRun }), ctx as never),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

describe('linux backend with tuned', () => {
  it('lists tuned profiles by kind with descriptions; virtual-guest active; settings from sysfs', () =>
    using({ tuned: tuned(), sysfs: { tree: intelPstateTree(2, 'performance') } }, async (b) => {
      const plans = await b.backend.listPlans();
      assert.equal(plans.length, 14);
      assert.equal(plans[0]!.id, 'throughput-performance');
      assert.equal(resolvePlan('high-performance', plans).id, 'throughput-performance');
      assert.equal(resolvePlan('power-saver', plans).id, 'powersave');
      assert.equal(plans.find((p) => p.id === 'intel-sst')?.kind, 'custom');
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'tuned');
      assert.equal(active.plan?.id, 'virtual-guest');
      assert.equal(active.plan?.description, 'Optimize for running inside a virtual guest');
      assert.equal(active.processor.governor, 'performance');
      assert.equal(active.canSet, true);
    }));

  it('sets through `tuned-adm profile`, reads back from its files, and an idempotent set calls nothing', () =>
    using({ tuned: tuned() }, async (b) => {
      const result = await setPlan(b.backend, 'latency-performance', false);
      assert.equal(result.changed, true);
      assert.equal((await b.backend.getActive()).plan?.id, 'latency-performance');
      const calls = await b.calls('tuned-adm');
      assert.ok(calls.some((a) => a.join(' ') === 'profile latency-performance'));
      assert.ok(
        !calls.some((a) => a[0] === 'active' || a[0] === 'list'),
        `no tuned-adm read: ${JSON.stringify(calls)}`,
      );

      const before = (await b.calls('tuned-adm')).length;
      const again = await setPlan(b.backend, 'latency-performance', false);
      assert.equal(again.changed, false);
      const later = (await b.calls('tuned-adm')).slice(before);
      assert.ok(!later.some((a) => a[0] === 'profile'), 'no second switch');
    }));

  it('a dry run switches nothing', () =>
    using({ tuned: tuned() }, async (b) => {
      const r = await setPlan(b.backend, 'powersave', true);
      assert.equal(r.dryRun, true);
      assert.equal(r.after.id, 'powersave');
      assert.ok(!(await b.calls('tuned-adm')).some((a) => a[0] === 'profile'));
      assert.equal((await b.backend.getActive()).plan?.id, 'virtual-guest');
    }));

  it('refused by polkit: forbidden naming com.redhat.tuned.switch_profile', () =>
    using({ tuned: tuned({ authorized: false }) }, async (b) => {
      await assert.rejects(b.backend.setActive('balanced'), (e: unknown) => {
        assert.ok(e instanceof PowerPlanError);
        assert.equal(e.code, 'forbidden');
        assert.match(e.message, /com\.redhat\.tuned\.switch_profile/);
        return true;
      });
      assert.equal((await b.backend.getActive()).plan?.id, 'virtual-guest');
    }));

  it('an unknown profile never reaches tuned-adm', () =>
    using({ tuned: tuned() }, async (b) => {
      await assert.rejects(
        b.backend.setActive('no-such'),
        (e: unknown) => e instanceof PowerPlanError && e.code === 'not_found',
      );
      assert.ok(!(await b.calls('tuned-adm')).some((a) => a[0] === 'profile'));
    }));

  it('in a VM without cpufreq it warns that the host decides the clock', () =>
    using({ tuned: tuned(), cpuinfo: 'flags\t\t: fpu hypervisor\n' }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'tuned');
      assert.ok(active.warnings?.some((w) => /virtual machine detected/.test(w)));
      assert.ok(active.notes?.some((n) => n.code === 'vm-host-decides' && /virtual machine/.test(n.text)));
    }));

  it('tuned installed but stopped: the next owner answers, with a warning', () =>
    using({ tuned: tuned({ daemon: 'stopped', active: null }), ppd: ppd() }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'power-profiles-daemon');
      assert.ok(active.warnings?.some((w) => /tuned-adm is installed/.test(w)));
      assert.ok(active.notes?.some((n) => n.code === 'owner-inactive' && /tuned-adm/.test(n.text)));
      assert.deepEqual(
        active.warnings,
        active.notes?.map((n) => n.text),
        'warnings are the notes in words',
      );
    }));

  it('tuned wins over a PPD-compatible API (tuned-ppd)', () =>
    using({ tuned: tuned(), ppd: ppd() }, async (b) => {
      assert.equal((await b.backend.getActive()).owner, 'tuned');
    }));
});

describe('linux backend with power-profiles-daemon', () => {
  it('lists the three profiles with drivers; active marked; degraded performance warned', () =>
    using({ ppd: ppd({ format: 'old', active: 'balanced', profiles: oldProfiles }) }, async (b) => {
      const plans = await b.backend.listPlans();
      assert.deepEqual(
        plans.map((p) => [p.id, p.kind, p.active]),
        [
          ['performance', 'high-performance', false],
          ['balanced', 'balanced', true],
          ['power-saver', 'power-saver', false],
        ],
      );
      assert.match(plans[0]!.description ?? '', /degraded \(high-operating-temperature\)/);
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'power-profiles-daemon');
      assert.ok(active.warnings?.some((w) => /performance profile is degraded/.test(w)));
      assert.deepEqual(
        active.notes?.map((n) => n.code),
        ['profile-degraded'],
      );
    }));

  it('sets through `powerprofilesctl set` and reads back with `get`', () =>
    using({ ppd: ppd() }, async (b) => {
      await b.backend.setActive('performance');
      assert.equal((await b.backend.getActive()).plan?.id, 'performance');
      const calls = (await b.calls('powerprofilesctl')).map((a) => a.join(' '));
      const i = calls.indexOf('set performance');
      assert.ok(i >= 0);
      assert.equal(calls[i + 1], 'get');
    }));

  it('refused by polkit: forbidden naming the action the daemon reported', () =>
    using(
      { ppd: ppd({ authorized: false, action: 'net.hadess.PowerProfiles.switch-profile' }) },
      async (b) => {
        await assert.rejects(b.backend.setActive('power-saver'), (e: unknown) => {
          assert.ok(e instanceof PowerPlanError);
          assert.equal(e.code, 'forbidden');
          assert.match(e.message, /net\.hadess\.PowerProfiles\.switch-profile/);
          return true;
        });
      },
    ));

  it('a busy EPP write inside the daemon is an os_error with its text', () =>
    using({ ppd: ppd({ busy: true }) }, async (b) => {
      await assert.rejects(
        b.backend.setActive('power-saver'),
        (e: unknown) =>
          e instanceof PowerPlanError && e.code === 'os_error' && /Device or resource busy/.test(e.message),
      );
    }));

  it('placeholder driver: no performance profile, and a warning says why', () =>
    using(
      {
        ppd: ppd({
          profiles: [
            { name: 'balanced', platformDriver: 'placeholder' },
            { name: 'power-saver', platformDriver: 'placeholder' },
          ],
        }),
      },
      async (b) => {
        assert.deepEqual(
          (await b.backend.listPlans()).map((p) => p.id),
          ['balanced', 'power-saver'],
        );
        assert.ok((await b.backend.getActive()).warnings?.some((w) => /placeholder/.test(w)));
        assert.ok(
          (await b.backend.getActive()).notes?.some(
            (n) => n.code === 'no-performance-profile' && /placeholder/.test(n.text),
          ),
        );
      },
    ));

  it('daemon not running and cpufreq present: plain sysfs owns it, with a warning', () =>
    using({ ppd: ppd({ daemon: 'stopped' }), sysfs: { tree: intelPstateTree() } }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'sysfs');
      assert.equal(active.plan?.id, 'powersave:balance_performance');
      assert.ok(active.warnings?.some((w) => /power-profiles-daemon does not answer/.test(w)));
      assert.ok(
        active.notes?.some((n) => n.code === 'owner-inactive' && /power-profiles-daemon/.test(n.text)),
      );
    }));
});

const oldProfiles: PpdState['profiles'] = [
  { name: 'performance', cpuDriver: 'intel_pstate', degraded: 'high-operating-temperature' },
  { name: 'balanced', cpuDriver: 'intel_pstate' },
  { name: 'power-saver', cpuDriver: 'intel_pstate' },
];
