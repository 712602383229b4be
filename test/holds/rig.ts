/**
 * The two backends the hold and desired-state tests run on: the simulated stock Windows Server and
 * the Windows backend driving the powercfg/reg emulators. A rig can change the plan behind the
 * service's back (another tool, a colleague's script) and hand the plan to group policy.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { buildDeps, type Deps } from '../../src/deps.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { createWindowsBackend } from '../../src/platform/windows/windows-backend.ts';
import { emulate, POWERCFG_EMULATOR, REG_EMULATOR } from '../platform/windows/emulator.ts';
import { testDeps } from '../support/deps.ts';

export interface Rig {
  deps: Deps;
  dir: string;
  /** The same backend and state directory as a new process would see them (a restart). */
  restart(): Promise<Deps>;
  activeId(): Promise<string | undefined>;
  /** Switches the plan without the service knowing. */
  changeBehindBack(planId: string): Promise<void>;
  /** Group policy pins the plan in force. */
  pinByPolicy(): Promise<void>;
  cleanup(): Promise<void>;
}

export type RigFactory = (env?: Record<string, string>) => Promise<Rig>;

const simulated: RigFactory = async (env = {}) => {
  const t = await testDeps(env);
  const statePath = join(t.dir, 'simulated-backend.json');
  return {
    deps: t.deps,
    dir: t.dir,
    restart: async () => buildDeps(loadConfig(t.env)),
    activeId: async () => (await t.deps.backend.getActive()).plan?.id,
    changeBehindBack: (planId) => t.deps.backend.setActive(planId),
    async pinByPolicy() {
      // Start from a full state file: the simulated backend only writes one after a change.
      await t.deps.backend.setActive(SCHEME.highPerformance);
      await t.deps.backend.setActive(SCHEME.balanced);
      const s = JSON.parse(await readFile(statePath, 'utf8'));
      await writeFile(statePath, JSON.stringify({ ...s, policyManaged: true }));
    },
    cleanup: t.cleanup,
  };
};

const windowsEmulator: RigFactory = async (env = {}) => {
  const emu = await emulate();
  const t = await testDeps(env, { backend: emu.backend });
  return {
    deps: t.deps,
    dir: t.dir,
    restart: async () =>
      buildDeps(loadConfig(t.env), {
        backend: createWindowsBackend({
          powercfgPath: POWERCFG_EMULATOR,
          regPath: REG_EMULATOR,
          chcpPath: null,
          run: emu.run,
        }),
      }),
    activeId: async () => (await emu.state()).active,
    changeBehindBack: (planId) =>
      emu.update((s) => {
        s.active = planId;
      }),
    pinByPolicy: () =>
      emu.update((s) => {
        s.policy = s.active;
      }),
    async cleanup() {
      await t.cleanup();
      await emu.cleanup();
    },
  };
};

export const rigs: [string, RigFactory][] = [
  ['simulated backend', simulated],
  ['Windows backend on the powercfg emulator', windowsEmulator],
];
