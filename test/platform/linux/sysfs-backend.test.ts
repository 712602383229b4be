import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PowerPlanError } from '../../../src/domain/errors.ts';
import { ActivePlan } from '../../../src/domain/schemas.ts';
import { resolvePlan } from '../../../src/platform/resolve.ts';
import { backendContract } from '../backend-contract.ts';
import {
  build,
  cpufreqTree,
  intelPstateTree,
  readTreeFile,
  refusingIo,
  type Setup,
  using,
} from './harness.ts';

const subject = (setup: Setup) => async () => build(setup);

const amdTree = cpufreqTree(
  8,
  () => ({
    scaling_driver: 'amd-pstate-epp',
    scaling_governor: 'powersave',
    scaling_available_governors: 'performance powersave',
    energy_performance_preference: 'balance_power',
    energy_performance_available_preferences: 'default performance balance_performance balance_power power ',
    cpuinfo_max_freq: '5000000',
    scaling_max_freq: '5000000',
    scaling_min_freq: '400000',
  }),
  { 'devices/system/cpu/amd_pstate/status': 'active', 'devices/system/cpu/cpufreq/boost': '1' },
);

const acpiTree = (governor: (cpu: number) => string) =>
  cpufreqTree(4, (cpu) => ({
    scaling_driver: 'acpi-cpufreq',
    scaling_governor: governor(cpu),
    scaling_available_governors: 'conservative ondemand userspace powersave performance schedutil',
    cpuinfo_max_freq: '3000000',
    scaling_max_freq: '3000000',
    scaling_min_freq: '1200000',
  }));

const passiveTree = cpufreqTree(
  2,
  () => ({
    scaling_driver: 'intel_cpufreq',
    scaling_governor: 'powersave',
    scaling_available_governors: 'conservative ondemand userspace powersave performance schedutil',
  }),
  { 'devices/system/cpu/intel_pstate/status': 'passive' },
);

const pccTree = cpufreqTree(2, () => ({
  scaling_driver: 'pcc-cpufreq',
  scaling_governor: 'ondemand',
  scaling_available_governors: 'ondemand performance',
}));

backendContract(
  'linux sysfs: node_exporter fixture (intel_pstate, no EPP)',
  subject({ sysfs: { fixture: 'node-exporter-fixture-1' } }),
  {
    settable: true,
  },
);
backendContract(
  'linux sysfs: tlp-derived fixture (intel_pstate + EPP)',
  subject({ sysfs: { fixture: 'tlp-derived-plasma-pstate31' } }),
  {
    settable: true,
  },
);
backendContract(
  'linux sysfs: platform_profile fixture (no cpufreq)',
  subject({ sysfs: { fixture: 'platform-profile-lmt212' } }),
  {
    settable: false,
  },
);
backendContract('linux sysfs: amd-pstate-epp tree', subject({ sysfs: { tree: amdTree } }), {
  settable: true,
});
backendContract('linux sysfs: acpi-cpufreq tree', subject({ sysfs: { tree: acpiTree(() => 'schedutil') } }), {
  settable: true,
});
backendContract('linux sysfs: intel_cpufreq (passive) tree', subject({ sysfs: { tree: passiveTree } }), {
  settable: true,
});
backendContract(
  'linux sysfs: read-only tree (every write refused)',
  subject({ sysfs: { tree: intelPstateTree() }, io: refusingIo(/cpufreq/), uid: 1000 }),
  { settable: false },
);
backendContract('linux sysfs: pcc-cpufreq tree', subject({ sysfs: { tree: pccTree } }), { settable: false });
backendContract(
  'linux sysfs: VM without cpufreq',
  subject({ sysfs: { tree: {} }, cpuinfo: 'flags\t\t: fpu vme hypervisor lahf_lm\n' }),
  {
    settable: false,
  },
);

describe('linux sysfs backend', () => {
  it('node_exporter tree: powersave on intel_pstate (active) is balanced, performance is high-performance', () =>
    using({ sysfs: { fixture: 'node-exporter-fixture-1' } }, async (b) => {
      const plans = await b.backend.listPlans();
      assert.deepEqual(
        plans.map((p) => [p.id, p.kind, p.active]),
        [
          ['performance', 'high-performance', false],
          ['powersave', 'balanced', true],
        ],
      );
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'sysfs');
      assert.equal(active.processor.driver, 'intel_pstate');
      assert.equal(active.processor.driverMode, 'active');
      // cpu2/3 of this fixture have other frequency limits: per-CPU detail is given
      assert.equal(active.processor.cpus?.length, 4);
      assert.equal(active.processor.cpus?.[2]?.maxFreqKHz, 4200000);
    }));

  it('tlp-derived tree: EPP plans as governor:epp, in preference order within each kind', () =>
    using({ sysfs: { fixture: 'tlp-derived-plasma-pstate31' } }, async (b) => {
      const plans = await b.backend.listPlans();
      assert.deepEqual(
        plans.map((p) => [p.id, p.kind]),
        [
          ['performance', 'high-performance'],
          ['powersave:performance', 'high-performance'],
          ['powersave:balance_performance', 'balanced'],
          ['powersave:balance_power', 'balanced'],
          ['powersave:power', 'power-saver'],
        ],
      );
      assert.equal(resolvePlan('balanced', plans).id, 'powersave:balance_performance');
      assert.equal(resolvePlan('power-saver', plans).id, 'powersave:power');
      const active = await b.backend.getActive();
      assert.equal(active.plan?.id, 'performance');
      assert.equal(active.processor.energyPreference, 'performance');
      assert.deepEqual(active.processor.epp, { ac: 0, dc: 0 });
      assert.deepEqual(active.processor.minStatePercent, null, 'no cpuinfo_max_freq in this tree');
    }));

  it('writes governor then EPP on every CPU and reads them back', () =>
    using({ sysfs: { tree: intelPstateTree(4, 'performance') } }, async (b) => {
      await b.backend.setActive('powersave:balance_power');
      for (const cpu of [0, 1, 2, 3]) {
        assert.equal(
          await readTreeFile(b.sysfsRoot, `devices/system/cpu/cpu${cpu}/cpufreq/scaling_governor`),
          'powersave',
        );
        assert.equal(
          await readTreeFile(
            b.sysfsRoot,
            `devices/system/cpu/cpu${cpu}/cpufreq/energy_performance_preference`,
          ),
          'balance_power',
        );
      }
      const active = await b.backend.getActive();
      assert.equal(active.plan?.kind, 'balanced');
      assert.deepEqual(active.processor.minStatePercent, { ac: 20, dc: 20 }, 'intel_pstate min_perf_pct');
      assert.equal(active.processor.turbo, true);
    }));

  it('amd-pstate-epp: mode, boost and EPP plans', () =>
    using({ sysfs: { tree: amdTree } }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.plan?.id, 'powersave:balance_power');
      assert.equal(active.processor.driverMode, 'active');
      assert.equal(active.processor.turbo, true);
      assert.deepEqual(active.processor.maxStatePercent, { ac: 100, dc: 100 });
      assert.deepEqual(active.processor.minStatePercent, { ac: 8, dc: 8 });
    }));

  it('acpi-cpufreq: every governor is a plan; schedutil answers balanced, userspace is custom', () =>
    using({ sysfs: { tree: acpiTree(() => 'ondemand') } }, async (b) => {
      const plans = await b.backend.listPlans();
      assert.deepEqual(
        plans.map((p) => [p.id, p.kind]),
        [
          ['performance', 'high-performance'],
          ['schedutil', 'balanced'],
          ['ondemand', 'balanced'],
          ['conservative', 'balanced'],
          ['powersave', 'power-saver'],
          ['userspace', 'custom'],
        ],
      );
      assert.equal(resolvePlan('balanced', plans).id, 'schedutil');
    }));

  it('intel_cpufreq (passive): powersave pins the minimum clock, so it is power-saver, with a warning', () =>
    using({ sysfs: { tree: passiveTree } }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.plan?.id, 'powersave');
      assert.equal(active.plan?.kind, 'power-saver');
      assert.equal(active.processor.driverMode, 'passive');
      assert.ok(active.warnings?.some((w) => /passive/.test(w) && /minimum clock/.test(w)));
      assert.ok(active.notes?.some((n) => n.code === 'passive-powersave' && /minimum clock/.test(n.text)));
    }));

  it('mixed governors: summary `mixed`, per-CPU detail, a warning naming the CPUs, and one set fixes it', () =>
    using({ sysfs: { tree: acpiTree((cpu) => (cpu < 2 ? 'performance' : 'powersave')) } }, async (b) => {
      const active = ActivePlan.parse(await b.backend.getActive());
      assert.equal(active.processor.governor, 'mixed');
      assert.deepEqual(
        active.processor.cpus?.map((c) => c.governor),
        ['performance', 'performance', 'powersave', 'powersave'],
      );
      assert.equal(active.plan?.id, 'mixed');
      assert.equal(active.plan?.kind, 'custom');
      assert.ok(active.warnings?.some((w) => w.includes('cpu0-1 performance, cpu2-3 powersave')));
      assert.ok(
        active.notes?.some((n) => n.code === 'cpus-disagree' && n.text.includes('cpu0-1 performance')),
      );
      const plans = await b.backend.listPlans();
      assert.equal(plans.filter((p) => p.active).length, 1);
      await assert.rejects(
        b.backend.setActive('mixed'),
        (e: unknown) => e instanceof PowerPlanError && e.code === 'not_found',
      );
      await b.backend.setActive('performance');
      const after = await b.backend.getActive();
      assert.equal(after.processor.governor, 'performance');
      assert.equal(after.plan?.id, 'performance');
      assert.equal(after.processor.cpus, undefined);
    }));

  it('some CPUs refuse the write: forbidden, naming them, and the others changed', () =>
    using({ sysfs: { tree: intelPstateTree(4, 'powersave') }, io: refusingIo(/cpu[23]\//) }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.canSet, false);
      assert.match(active.cannotSetReason ?? '', /cpu2-3 of 4 CPUs/);
      await assert.rejects(b.backend.setActive('performance'), (e: unknown) => {
        assert.ok(e instanceof PowerPlanError);
        assert.equal(e.code, 'forbidden');
        assert.match(e.message, /cpu2-3 \(of 4 CPUs\)/);
        assert.match(e.message, /EACCES/);
        assert.match(e.message, /root/);
        assert.match(e.message, /now disagree/);
        return true;
      });
      const after = await b.backend.getActive();
      assert.equal(after.processor.governor, 'mixed');
      assert.deepEqual(
        after.processor.cpus?.map((c) => c.governor),
        ['performance', 'performance', 'powersave', 'powersave'],
      );
    }));

  it('a read-only /sys (EROFS) is forbidden too and says so', () =>
    using(
      { sysfs: { tree: intelPstateTree(2, 'powersave') }, io: refusingIo(/cpufreq/, 'EROFS'), uid: 0 },
      async (b) => {
        assert.match((await b.backend.getActive()).cannotSetReason ?? '', /read-only/);
        await assert.rejects(
          b.backend.setActive('performance'),
          (e: unknown) =>
            e instanceof PowerPlanError && e.code === 'forbidden' && /read-only/.test(e.message),
        );
      },
    ));

  it('a write the kernel rejects for another reason is an os_error', () =>
    using(
      {
        sysfs: { tree: intelPstateTree(2, 'powersave') },
        io: refusingIo(/energy_performance_preference/, 'EBUSY'),
      },
      async (b) => {
        await assert.rejects(
          b.backend.setActive('powersave:power'),
          (e: unknown) => e instanceof PowerPlanError && e.code === 'os_error' && /EBUSY/.test(e.message),
        );
      },
    ));

  it('a write that does not stick is caught by the read-back', () =>
    using(
      {
        sysfs: { tree: intelPstateTree(2, 'powersave') },
        io: { write: async () => {}, writable: async () => true },
      },
      async (b) => {
        await assert.rejects(
          b.backend.setActive('performance'),
          (e: unknown) =>
            e instanceof PowerPlanError && e.code === 'os_error' && /cpu0 reads back/.test(e.message),
        );
      },
    ));

  it('pcc-cpufreq: firmware decides, no plans', () =>
    using({ sysfs: { tree: pccTree } }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'firmware');
      assert.equal(active.plan, null);
      assert.match(active.cannotSetReason ?? '', /pcc-cpufreq/);
      assert.deepEqual(await b.backend.listPlans(), []);
    }));

  it('no cpufreq in a VM: owner hypervisor and a reason naming the hypervisor (DMI)', () =>
    using(
      {
        sysfs: {
          tree: {
            'class/dmi/id/sys_vendor': 'QEMU',
            'class/dmi/id/product_name': 'Standard PC (Q35 + ICH9, 2009)',
          },
        },
      },
      async (b) => {
        const active = await b.backend.getActive();
        assert.equal(active.owner, 'hypervisor');
        assert.match(active.cannotSetReason ?? '', /virtual machine detected \(qemu\)/);
        assert.match(active.cannotSetReason ?? '', /hypervisor host's power policy/);
        assert.deepEqual((await b.backend.facts()).virtualization, { detected: true, kind: 'qemu' });
        assert.deepEqual(await b.backend.capabilities(), {
          listPlans: false,
          setPlan: false,
          createPlan: false,
          processorSettings: false,
        });
      },
    ));

  it('no cpufreq on bare metal: owner none, and the reason points at the driver or the BIOS', () =>
    using({ sysfs: { fixture: 'platform-profile-lmt212' } }, async (b) => {
      const active = await b.backend.getActive();
      assert.equal(active.owner, 'none');
      assert.match(active.cannotSetReason ?? '', /no cpufreq controls/);
      assert.equal(active.processor.platformProfile, 'balanced');
      assert.deepEqual((await b.backend.facts()).virtualization, { detected: false, kind: null });
    }));

  it('power source from /sys/class/power_supply', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ 'class/power_supply/AC/type': 'Mains', 'class/power_supply/AC/online': '1' }, 'ac'],
      [
        {
          'class/power_supply/AC/type': 'Mains',
          'class/power_supply/AC/online': '0',
          'class/power_supply/BAT0/type': 'Battery',
          'class/power_supply/BAT0/status': 'Discharging',
        },
        'battery',
      ],
      [{}, 'unknown'],
    ];
    for (const [tree, expected] of cases) {
      await using({ sysfs: { tree } }, async (b) =>
        assert.equal((await b.backend.facts()).powerSource, expected),
      );
    }
  });
});
