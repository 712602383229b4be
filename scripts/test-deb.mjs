#!/usr/bin/env node
// `npm run test:deb` (root, in CI): checks release/powerplan_<version>_amd64.deb (built by
// `npm run package:deb` when missing): its control data and contents (dpkg-deb --info/--contents),
// then installs it into this machine with dpkg -i, checks the system user, the state directory,
// `systemd-analyze verify` of the installed unit and `powerplan active`, and purges it, which must
// leave none of its files; then an install over a /var/lib/powerplan of another user (named, with
// the fix, and not taken over) and over an empty one (taken over). Refuses to run where powerplan
// is installed already (it would replace it).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { serviceExecArgv } from './lib/start-points.mjs';

const root = resolve(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const deb = join(root, 'release', `powerplan_${version}_amd64.deb`);
const sh = (cmd, args, options = {}) => execFileSync(cmd, args, { encoding: 'utf8', ...options });

if (process.getuid?.() !== 0) {
  console.error('test:deb installs a package: run it as root (CI does)');
  process.exit(1);
}
if (spawnSync('dpkg-query', ['-W', 'powerplan'], { stdio: 'ignore' }).status === 0) {
  console.error('powerplan is installed on this machine: test:deb would replace it; remove it first');
  process.exit(1);
}
// This machine's own /var/lib/powerplan (a root run of the service or the CLI leaves one) is moved
// aside while the package is tried, and put back afterwards: the tests begin from a known state.
const STATE = '/var/lib/powerplan';
const ASIDE = `${STATE}.test-deb-aside`;
if (existsSync(STATE)) {
  rmSync(ASIDE, { recursive: true, force: true });
  renameSync(STATE, ASIDE);
}
process.on('exit', () => {
  if (existsSync(ASIDE) && !existsSync(STATE)) renameSync(ASIDE, STATE);
});

// Built from this checkout every time: a package left by an earlier build would test older code.
sh(process.execPath, [join(root, 'scripts', 'package-deb.mjs')], { stdio: 'inherit' });

const contents = sh('dpkg-deb', ['--contents', deb], { maxBuffer: 16 * 1024 * 1024 })
  .trim()
  .split('\n')
  .map((l) => l.split(/\s+/).slice(5).join(' ').replace(/^\./, '').split(' -> ')[0])
  .filter((p) => p && p !== '/');

test('dpkg-deb --info: the package, its version, architecture and dependencies', () => {
  const info = sh('dpkg-deb', ['--info', deb]);
  assert.match(info, /^ Package: powerplan$/m);
  assert.match(info, new RegExp(`^ Version: ${version.replaceAll('.', '\\.')}$`, 'm'));
  assert.match(info, /^ Architecture: amd64$/m);
  assert.match(info, /^ Depends: .*libc6/m);
  for (const script of ['postinst', 'prerm', 'postrm']) assert.match(info, new RegExp(`\\b${script}\\b`));
});

test('dpkg-deb --contents: the executable, the command, the unit, the polkit rule, the docs assets', () => {
  for (const path of [
    '/usr/lib/powerplan/powerplan',
    '/usr/bin/powerplan',
    '/lib/systemd/system/powerplan.service',
    '/usr/share/polkit-1/rules.d/50-powerplan.rules',
    '/usr/lib/powerplan/page/index.html',
    '/usr/lib/powerplan/node_modules/swagger-ui-dist/swagger-ui-bundle.js',
    '/usr/share/doc/powerplan/copyright',
  ]) {
    assert.ok(contents.includes(path), path);
  }
  // Nothing in the state directory or /etc: those are the maintainer scripts' and the admin's.
  assert.deepEqual(
    contents.filter((p) => p.startsWith('/var/') || p.startsWith('/etc/')),
    [],
  );
});

test('dpkg -i installs it: the powerplan user, /var/lib/powerplan (0700, its own), the unit verifies, powerplan active answers; purge leaves no file', () => {
  try {
    sh('dpkg', ['-i', deb], { stdio: ['ignore', 'pipe', 'inherit'] });
    const user = sh('getent', ['passwd', 'powerplan']).trim().split(':');
    assert.equal(user[5], '/var/lib/powerplan');
    assert.equal(user[6], '/usr/sbin/nologin');
    const st = statSync('/var/lib/powerplan');
    assert.equal(st.mode & 0o777, 0o700);
    assert.equal(st.uid, Number(user[2]));
    const verify = spawnSync('systemd-analyze', ['verify', '/lib/systemd/system/powerplan.service'], {
      encoding: 'utf8',
    });
    assert.equal(verify.status, 0, verify.stderr);
    assert.doesNotMatch(verify.stderr, /powerplan\.service/, verify.stderr);
    assert.match(sh('/usr/bin/powerplan', ['--version']), new RegExp(version.replaceAll('.', '\\.')));
    // As the service runs it: the powerplan user, its state directory.
    const active = JSON.parse(
      sh('runuser', ['-u', 'powerplan', '--', '/usr/bin/powerplan', 'active', '--json'], {
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', POWERPLAN_STATE_DIR: '/var/lib/powerplan' },
        cwd: '/',
      }),
    );
    // The Linux backend's answer on this machine: who owns the plan and whether it can be set.
    assert.ok(
      ['tuned', 'power-profiles-daemon', 'sysfs', 'hypervisor', 'firmware', 'none'].includes(active.owner),
      JSON.stringify(active),
    );
    assert.equal(typeof active.canSet, 'boolean');
    // The executable carries the service's V8 flags itself (sea-config.json's execArgv): the unit
    // starts it without any.
    const system = JSON.parse(
      sh('runuser', ['-u', 'powerplan', '--', '/usr/bin/powerplan', 'system', '--json'], {
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', POWERPLAN_STATE_DIR: '/var/lib/powerplan' },
        cwd: '/',
      }),
    );
    assert.deepEqual(system.service.execArgv, serviceExecArgv());
  } finally {
    spawnSync('dpkg', ['--purge', 'powerplan'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const left = contents.filter((p) => {
    try {
      const st = statSync(p);
      return !st.isDirectory();
    } catch {
      return false;
    }
  });
  assert.deepEqual(left, [], 'files of the package left after purge');
  for (const dir of ['/usr/lib/powerplan', '/var/lib/powerplan', '/etc/powerplan'])
    assert.ok(!existsSync(dir), dir);
  assert.notEqual(spawnSync('dpkg-query', ['-W', 'powerplan'], { stdio: 'ignore' }).status, 0);
});

test("a /var/lib/powerplan of another user: the install names its files and the fix, and takes none over; an empty one becomes the service's", () => {
  try {
    mkdirSync(STATE, { mode: 0o755 });
    writeFileSync(`${STATE}/admin.token`, 'left by root\n', { mode: 0o600 });
    const foreign = spawnSync('dpkg', ['-i', deb], { encoding: 'utf8' });
    assert.equal(foreign.status, 0, foreign.stderr);
    assert.match(foreign.stderr, /\/var\/lib\/powerplan holds files of another user/);
    assert.match(foreign.stderr, /root:root \/var\/lib\/powerplan\/admin\.token/);
    assert.match(foreign.stderr, /chown -R powerplan:powerplan \/var\/lib\/powerplan/);
    assert.equal(statSync(`${STATE}/admin.token`).uid, 0, 'not taken over');
    spawnSync('dpkg', ['--purge', 'powerplan'], { stdio: ['ignore', 'ignore', 'inherit'] });

    mkdirSync(STATE, { mode: 0o755 });
    const empty = spawnSync('dpkg', ['-i', deb], { encoding: 'utf8' });
    assert.equal(empty.status, 0, empty.stderr);
    assert.doesNotMatch(empty.stderr, /another user/);
    const uid = Number(sh('id', ['-u', 'powerplan']).trim());
    const st = statSync(STATE);
    assert.equal(st.uid, uid);
    assert.equal(st.mode & 0o777, 0o700);
  } finally {
    spawnSync('dpkg', ['--purge', 'powerplan'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  assert.ok(!existsSync(STATE));
});
