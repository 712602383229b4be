// Builds the .exe stand-ins for the Windows commands the product runs (powercfg.exe, reg.exe,
// icacls.exe, powershell.exe), each running its emulator from test/emulators/ (see standin.cjs). Wine has no
// powercfg.exe and its icacls.exe is a stub that prints nothing, so the Windows tier points
// POWERPLAN_POWERCFG, POWERPLAN_REG, POWERPLAN_ICACLS and POWERPLAN_POWERSHELL at these
// (Wine has no PowerShell).
import { copyFileSync, linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildSea } from './sea.mjs';
import { pinned } from './toolchain.mjs';
import { winPath } from './wine.mjs';

const root = resolve(import.meta.dirname, '..', '..');
export const STANDINS = {
  powercfg: 'test/emulators/powercfg.mjs',
  reg: 'test/emulators/reg-win.mjs',
  icacls: 'test/emulators/icacls.mjs',
  powershell: 'test/emulators/powershell.mjs',
  wevtutil: 'test/emulators/wevtutil.mjs',
  // WinSW, as powerplan-service.exe beside powerplan.exe (a .NET program: not run under Wine).
  'powerplan-service': 'test/emulators/winsw.mjs',
};

const toWindows = (p) => (process.platform === 'win32' ? p : winPath(p));

/**
 * Fills `dir` with <name>.exe for every stand-in, all links of `exe` (built once by buildStandins),
 * with `env` for the emulators; returns the paths as the Windows side sees them.
 */
export const linkStandins = (exe, dir, env = {}) => {
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(import.meta.dirname, 'standin-loader.cjs'), join(dir, 'loader.cjs'));
  const scripts = {};
  const paths = {};
  for (const [name, script] of Object.entries(STANDINS)) {
    linkSync(exe, join(dir, `${name}.exe`));
    scripts[name] = toWindows(join(root, script));
    paths[name] = toWindows(join(dir, `${name}.exe`));
  }
  writeFileSync(join(dir, 'standins.json'), `${JSON.stringify({ scripts, env }, null, 1)}\n`);
  return paths;
};

/** Builds the stand-in executable into `dir`/standin.exe and links the stand-ins beside it. */
export const buildStandins = async (dir, prefix) => {
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, 'standin.exe');
  await buildSea({
    nodeExe: pinned('nodeWin'),
    mainScript: join(import.meta.dirname, 'standin.cjs'),
    out: exe,
    prefix,
  });
  return { exe, paths: linkStandins(exe, dir) };
};
