/**
 * Which backend the configuration gives: POWERPLAN_BACKEND=windows chooses the Windows backend on
 * any OS, and it runs nothing until asked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { createBackend } from '../../../src/platform/detect.ts';
import { SETTING } from '../../../src/platform/windows/well-known.ts';
import { S } from '../../emulators/win-emu-state.mjs';
import { testDeps } from '../../support/deps.ts';

describe('backend choice', () => {
  it('POWERPLAN_BACKEND=windows gives the Windows backend on any OS, without running anything', async () => {
    const { deps, cleanup } = await testDeps();
    try {
      const config = loadConfig({
        POWERPLAN_BACKEND: 'windows',
        POWERPLAN_STATE_DIR: deps.config.stateDir,
        POWERPLAN_POWERCFG: '/nonexistent/powercfg.exe',
      });
      const backend = createBackend(config, deps.store);
      assert.equal(backend.name, 'windows');
      assert.equal(config.powercfg, '/nonexistent/powercfg.exe');
      assert.deepEqual(await backend.capabilities(), {
        listPlans: true,
        setPlan: true,
        createPlan: true,
        processorSettings: true,
      });
      assert.equal(SETTING.personality, S.personality, 'the emulator and the backend agree on the GUIDs');
    } finally {
      await cleanup();
    }
  });
});
