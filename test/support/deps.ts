/** Fresh dependencies on the simulated backend over a temporary state directory. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { buildDeps, type Deps } from '../../src/deps.ts';
import { restrictToAdmins } from '../../src/lib/windows-acl.ts';
import { emulatorCommand } from './commands.ts';

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
  // On Windows the service refuses a state directory that Users can write (a new folder inherits
  // that): give it the ACL an administrator would.
  if (process.platform === 'win32') await restrictToAdmins(dir, true, { icacls: emulatorCommand('icacls') });
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

/** Runs `fn` on fresh deps (see testDeps) and cleans them up whatever `fn` does. */
export const withTestDeps = async <T>(
  fn: (t: TestDeps) => Promise<T>,
  ...args: Parameters<typeof testDeps>
): Promise<T> => {
  const t = await testDeps(...args);
  try {
    return await fn(t);
  } finally {
    await t.cleanup();
  }
};
