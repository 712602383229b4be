/**
 * Test harness: a Windows backend wired to the powercfg and reg emulators over a fresh state file
 * and argv log in a temp directory. The run function adds the emulator's two variables to the
 * child environment (the command wrapper passes no variables of its own by design).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunFn, runCommand } from '../../../src/lib/run-command.ts';
import {
  createWindowsBackend,
  type WindowsBackendOptions,
} from '../../../src/platform/windows/windows-backend.ts';
import { type EmuState, stockState } from '../../emulators/win-emu-state.mjs';
import { emulatorCommand } from '../../support/commands.ts';

export const POWERCFG_EMULATOR = emulatorCommand('powercfg');
export const REG_EMULATOR = emulatorCommand('reg');
export const WEVTUTIL_EMULATOR = emulatorCommand('wevtutil');

export interface ArgvEntry {
  tool: 'powercfg' | 'reg' | 'wevtutil';
  argv: string[];
}

export interface Emulated {
  dir: string;
  backend: ReturnType<typeof createWindowsBackend>;
  run: RunFn;
  state(): Promise<EmuState>;
  update(change: (s: EmuState) => void): Promise<void>;
  argv(): Promise<ArgvEntry[]>;
  /** powercfg calls whose first argument is `command` (e.g. '/getactivescheme'). */
  calls(command: string): Promise<string[][]>;
  cleanup(): Promise<void>;
}

export const emulate = async (
  init: { locale?: string; codepage?: number; change?: (s: EmuState) => void } = {},
  options: Partial<WindowsBackendOptions> = {},
): Promise<Emulated> => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-win-'));
  const statePath = join(dir, 'state.json');
  const logPath = join(dir, 'argv.jsonl');
  const initial = stockState(init.locale, init.codepage);
  init.change?.(initial);
  await writeFile(statePath, JSON.stringify(initial));
  const run: RunFn = (file, args, o = {}) =>
    runCommand(file, args, {
      ...o,
      env: { ...o.env, POWERPLAN_EMU_STATE: statePath, POWERPLAN_EMU_LOG: logPath },
    });
  const state = async (): Promise<EmuState> => JSON.parse(await readFile(statePath, 'utf8'));
  const argv = async (): Promise<ArgvEntry[]> => {
    const text = await readFile(logPath, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as ArgvEntry);
  };
  return {
    dir,
    backend: createWindowsBackend({
      powercfgPath: POWERCFG_EMULATOR,
      regPath: REG_EMULATOR,
      wevtutilPath: WEVTUTIL_EMULATOR,
      chcpPath: null,
      run,
      ...options,
    }),
    run,
    state,
    async update(change) {
      const s = await state();
      change(s);
      await writeFile(statePath, JSON.stringify(s));
    },
    argv,
    async calls(command) {
      return (await argv()).filter((e) => e.tool === 'powercfg' && e.argv[0] === command).map((e) => e.argv);
    },
    // Windows may still hold a file of a child that just exited: retry as rimraf does.
    cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 5 }),
  };
};

/** Runs `test` against a fresh emulated backend, and removes the emulator's files afterwards. */
export const withEmulated = async (
  init: Parameters<typeof emulate>[0],
  test: (emu: Emulated) => Promise<void>,
  options: Partial<WindowsBackendOptions> = {},
): Promise<void> => {
  const emu = await emulate(init, options);
  try {
    await test(emu);
  } finally {
    await emu.cleanup();
  }
};
