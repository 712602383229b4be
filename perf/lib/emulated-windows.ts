/**
 * The Windows backend on the powercfg/reg emulators (test/emulators/), for benchmark scripts: a
 * state file and argv log in a temp directory, a per-call delay, and the emulator's variables added
 * to the child environment (the command wrapper passes none of its own by design).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunFn, runCommand } from '../../src/lib/run-command.ts';
import { createWindowsBackend } from '../../src/platform/windows/windows-backend.ts';
import { stockState } from '../../test/emulators/win-emu-state.mjs';

const emulators = join(import.meta.dirname, '..', '..', 'test', 'emulators');

export interface EmulatedWindows {
  backend: ReturnType<typeof createWindowsBackend>;
  /** Every argv the emulators received, in order. */
  argv(): Promise<{ tool: string; argv: string[] }[]>;
  /** Number of powercfg runs per first argument (`/getactivescheme`, `/list`, ...). */
  runsByKind(): Promise<Record<string, number>>;
  clearLog(): Promise<void>;
  cleanup(): Promise<void>;
}

export const emulatedWindows = async (delayMs: number, cacheTtlMs?: number): Promise<EmulatedWindows> => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-bench-win-'));
  const statePath = join(dir, 'state.json');
  const logPath = join(dir, 'argv.jsonl');
  await writeFile(statePath, JSON.stringify({ ...stockState(), delayMs }));
  const run: RunFn = (file, args, o = {}) =>
    runCommand(file, args, {
      ...o,
      env: { ...o.env, POWERPLAN_EMU_STATE: statePath, POWERPLAN_EMU_LOG: logPath },
    });
  const argv = async () =>
    (await readFile(logPath, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { tool: string; argv: string[] });
  return {
    backend: createWindowsBackend({
      powercfgPath: join(emulators, 'powercfg.mjs'),
      regPath: join(emulators, 'reg-win.mjs'),
      chcpPath: null,
      run,
      ...(cacheTtlMs === undefined ? {} : { cacheTtlMs }),
    }),
    argv,
    async runsByKind() {
      const counts: Record<string, number> = {};
      for (const e of await argv()) {
        const kind = e.tool === 'powercfg' ? (e.argv[0] ?? '') : `${e.tool} ${e.argv[0] ?? ''}`;
        counts[kind] = (counts[kind] ?? 0) + 1;
      }
      return counts;
    },
    clearLog: () => writeFile(logPath, ''),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
};
