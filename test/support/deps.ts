/** Fresh dependencies on the simulated backend over a temporary state directory. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { buildDeps, type Deps } from '../../src/deps.ts';

export const repoRoot = resolve(import.meta.dirname, '..', '..');
export interface TestDeps {
  deps: Deps;
  dir: string;
  env: Record<string, string>;
  cleanup: () => Promise<void>;
}

/** Deps on the simulated backend over a new state directory; `env` reproduces them for a child process. */
export const testDeps = async (
  extraEnv: Record<string, string> = {},
  overrides: Partial<Deps> = {},
): Promise<TestDeps> => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-test-'));
  const env = {
    POWERPLAN_STATE_DIR: dir,
    POWERPLAN_BACKEND: 'simulated',
    POWERPLAN_LOG_LEVEL: 'silent',
    ...extraEnv,
  };
  const deps = buildDeps(loadConfig(env), overrides);
  return {
    deps,
    dir,
    env,
    cleanup: async () => {
      await deps.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
};
