/**
 * Commands the tests run, as the platform runs them. On Linux an emulator is its script (run
 * through its shebang); Windows runs no script as a command, so there the Windows tier
 * (`npm run test:windows`, scripts/test-windows.mjs) builds an .exe stand-in for each emulator and
 * names their folder in POWERPLAN_TEST_STANDINS.
 */
import { join } from 'node:path';

const emulators = join(import.meta.dirname, '..', 'emulators');
const scripts = {
  powercfg: 'powercfg.mjs',
  reg: 'reg-win.mjs',
  icacls: 'icacls.mjs',
  powershell: 'powershell.mjs',
  wevtutil: 'wevtutil.mjs',
} as const;

export const emulatorCommand = (name: keyof typeof scripts): string => {
  const standins = process.env.POWERPLAN_TEST_STANDINS;
  if (process.platform === 'win32') {
    if (!standins)
      throw new Error(`${name}: on Windows the emulators run as .exe stand-ins (npm run test:windows)`);
    return join(standins, `${name}.exe`);
  }
  return join(emulators, scripts[name]);
};

/**
 * Node arguments that load a TypeScript file: none where Node strips types itself (22.18 and
 * later; a Windows node.exe cannot use the Linux build of tsx's esbuild), else tsx's loader.
 */
export const typescriptLoader: string[] = (process.features as { typescript?: unknown }).typescript
  ? []
  : ['--import', 'tsx'];

/** A live process that does nothing for `seconds` (a Node child: there is no `sleep` on Windows). */
export const idleProcessArgs = (seconds: number): [string, string[]] => [
  process.execPath,
  ['-e', `setTimeout(() => {}, ${seconds * 1000})`],
];

/** What a child process of the tests gets from this one besides what a test names itself. */
const INHERITED = ['PATH', 'HOME'];
/** A Windows process also needs its system folders; and the commands the Windows tier set. */
const INHERITED_ON_WINDOWS = [
  'SystemRoot',
  'windir',
  'TEMP',
  'TMP',
  'USERPROFILE',
  'ProgramData',
  'POWERPLAN_POWERCFG',
  'POWERPLAN_REG',
  'POWERPLAN_ICACLS',
  'POWERPLAN_POWERSHELL',
  'POWERPLAN_WEVTUTIL',
];

export const childBaseEnv = (): Record<string, string> => {
  const env: Record<string, string> = { HOME: '/tmp' };
  for (const key of process.platform === 'win32' ? [...INHERITED, ...INHERITED_ON_WINDOWS] : INHERITED) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
};
