import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { buildDeps } from '../../../src/deps.ts';
import { ActivePlan } from '../../../src/domain/schemas.ts';
import { localCaller } from '../../../src/domain/scopes.ts';
import { getActivePowerPlan } from '../../../src/operations/get-active-power-plan.ts';
import { createLinuxBackend } from '../../../src/platform/linux/linux-backend.ts';

// The machines this project is built on are VMs without cpufreq; elsewhere these checks do not apply.
const noCpufreq = process.platform === 'linux' && !existsSync('/sys/devices/system/cpu/cpu0/cpufreq');
const skip = noCpufreq ? false : 'this machine exposes cpufreq (or is not Linux)';

describe('linux backend on this machine (default /sys and /proc)', () => {
  it('answers without controls, naming virtualization as the cause', { skip }, async () => {
    const backend = createLinuxBackend();
    const facts = await backend.facts();
    assert.equal(facts.virtualization.detected, true);
    const active = ActivePlan.parse(await backend.getActive());
    // A tuned or PPD daemon would own a VM too; none runs on these build machines.
    assert.equal(active.owner, 'hypervisor');
    assert.equal(active.canSet, false);
    assert.equal(active.plan, null);
    assert.match(active.cannotSetReason ?? '', /virtual machine detected/);
    assert.deepEqual(await backend.listPlans(), []);
  });

  it('get_active_power_plan through buildDeps answers the same, not an error', { skip }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-linux-real-'));
    try {
      const config = loadConfig({
        POWERPLAN_STATE_DIR: dir,
        POWERPLAN_LOG_LEVEL: 'silent',
        POWERPLAN_BACKEND: 'linux',
      });
      const deps = buildDeps(config, { backend: createLinuxBackend({ sysfsRoot: config.sysfsRoot }) });
      const ctx = { ...deps, signal: new AbortController().signal, caller: localCaller, progress: () => {} };
      const out = ActivePlan.parse(await getActivePowerPlan.handler({}, ctx as never));
      assert.equal(out.canSet, false);
      assert.match(out.cannotSetReason ?? '', /virtual machine/);
      // And the backend chosen by configuration alone is this one.
      assert.equal(buildDeps(config).backend.name, 'linux');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
