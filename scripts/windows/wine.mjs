// Windows processes on Linux: Debian's wine64 in a private, temporary prefix (see
// ../shared/docs/PLATFORMS.md and docs/WINDOWS.md). Only the build and test scripts use this; the
// product never knows it runs under Wine.
//
// Facts it works around: a fresh prefix reports Windows 7 (Node 22 refuses it), so the prefix is set
// to Windows 10 first; a Windows process's stdout must be a file, not a pipe; the prefix's
// wineserver outlives the processes, so close() stops it (`wineserver -k`, this prefix only).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const WINE = process.env.POWERPLAN_WINE || '/usr/lib/wine/wine64';
const WINESERVER = process.env.POWERPLAN_WINESERVER || '/usr/lib/wine/wineserver';

export const wineAvailable = () => existsSync(WINE);

/** The Windows path of a Linux path: Wine maps the Linux root to drive Z:. */
export const winPath = (linuxPath) => `Z:${linuxPath.replaceAll('/', '\\')}`;

/**
 * Windows processes in the Wine prefix `wineprefix` (an existing one, e.g. handed down by the
 * Windows tier in WINEPREFIX). `run` waits for one and returns its output (stdout and stderr go
 * through a file in `workDir`); `spawn` starts one with its output appended to `outFile`.
 */
export const openPrefix = (wineprefix, workDir) => {
  const env = {
    ...process.env,
    WINEPREFIX: wineprefix,
    WINEDEBUG: '-all',
    WINEDLLOVERRIDES: 'mscoree,mshtml=',
  };
  let n = 0;
  const run = (file, args, options = {}) => {
    const out = join(workDir, `out-${process.pid}-${++n}.txt`);
    const fd = openSync(out, 'w');
    try {
      const r = spawnSync(WINE, [file, ...args], {
        stdio: ['ignore', fd, fd],
        env: { ...env, ...options.env },
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 120_000,
      });
      const output = readFileSync(out, 'utf8');
      rmSync(out, { force: true });
      return { status: r.status, signal: r.signal, output };
    } finally {
      closeSync(fd);
    }
  };
  const start = (file, args, options = {}) => {
    const fd = openSync(options.outFile ?? join(workDir, `out-${process.pid}-${++n}.txt`), 'a');
    const child = spawn(WINE, [file, ...args], {
      stdio: ['ignore', fd, fd],
      env: { ...env, ...options.env },
      cwd: options.cwd,
    });
    closeSync(fd);
    return child;
  };
  return { env, run, spawn: start };
};

/** A new Wine prefix in a temporary directory, set to Windows 10; close() stops and removes it. */
export const createPrefix = (label = 'run') => {
  const dir = mkdtempSync(join(tmpdir(), `powerplan-wine-${label}-`));
  const prefix = openPrefix(join(dir, 'prefix'), dir);
  const set = prefix.run('reg', ['add', 'HKCU\\Software\\Wine', '/v', 'Version', '/d', 'win10', '/f']);
  if (set.status !== 0) throw new Error(`wine: could not set the prefix to Windows 10: ${set.output}`);
  return {
    ...prefix,
    dir,
    close() {
      spawnSync(WINESERVER, ['-k'], { env: prefix.env, stdio: 'ignore', timeout: 30_000 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
