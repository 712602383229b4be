#!/usr/bin/env node
// `npm run test:container` (root, in CI): the Dockerfile built and run with podman. Makes the
// engine's settings and the node:24-bookworm-slim base (scripts/container/base-image.mjs), builds
// the image (`--format docker`, so the HEALTHCHECK is kept), creates a token in a state volume as
// the README says, runs the image (host network, simulated backend, read-only root file system)
// and checks /healthz, the status page, /metrics, a plan change with that token, the HEALTHCHECK,
// the user, the read-only root, and the host's Linux backend read from inside; prints the build
// time and the image size against its base.
//
// npm inside the build reaches the registry with this machine's CA bundle (when it has one): the
// bundle and an npmrc naming it are mounted for the build only; the test checks that neither is in
// the image (buildah leaves their mount points behind as empty files).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { BASE_IMAGE, ensureBaseImage, ensureContainersConf } from './container/base-image.mjs';

const root = resolve(import.meta.dirname, '..');
const IMAGE = 'localhost/powerplan:test';
const name = `powerplan-test-${process.pid}`;
const volume = `${name}-state`;
const podman = (args, options = {}) =>
  execFileSync('podman', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options }).trim();
const tryPodman = (args) => spawnSync('podman', args, { encoding: 'utf8' });

if (process.getuid?.() !== 0) {
  console.error(
    'test:container writes /etc/containers/containers.conf and runs podman as root: run it as root (CI does)',
  );
  process.exit(1);
}
if (spawnSync('podman', ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.error('podman is not installed (apt-get install podman buildah runc uidmap mmdebstrap)');
  process.exit(1);
}
ensureContainersConf();
ensureBaseImage();

/** The CA bundle npm uses on this machine, if any: mounted into the build, never copied. */
const hostCa = [process.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt'].find(
  (f) => f && existsSync(f),
);
const BUILD_CA = '/usr/local/etc/npm-build-ca.crt';
const BUILD_NPMRC = '/usr/local/etc/npmrc';
const work = mkdtempSync(join(tmpdir(), 'powerplan-container-'));
const buildArgs = ['build', '--format', 'docker', '--pull=never', '--network', 'host', '--tag', IMAGE];
if (hostCa) {
  writeFileSync(join(work, 'npmrc'), `cafile=${BUILD_CA}\n`);
  buildArgs.push(
    '--volume',
    `${hostCa}:${BUILD_CA}:ro`,
    '--volume',
    `${join(work, 'npmrc')}:${BUILD_NPMRC}:ro`,
  );
}
const started = Date.now();
execFileSync('podman', [...buildArgs, root], { stdio: ['ignore', 'ignore', 'inherit'] });
const buildSeconds = Math.round((Date.now() - started) / 1000);

const freePort = () =>
  new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
/** Polls `probe` until it answers truthy, within a deadline (no fixed sleep). */
const until = async (what, probe, ms = 60_000) => {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
};

after(() => {
  tryPodman(['rm', '--force', '--time', '5', name]);
  tryPodman(['volume', 'rm', '--force', volume]);
  rmSync(work, { recursive: true, force: true });
});

let readToken;
let controlToken;

test("the image: a HEALTHCHECK (docker format), user node, neither the build's CA bundle nor its npmrc in it", () => {
  const config = JSON.parse(podman(['image', 'inspect', IMAGE]))[0];
  assert.deepEqual(config.Healthcheck?.Test, ['CMD', 'node', 'deploy/container/healthcheck.mjs']);
  assert.equal(config.Config.User, 'node');
  const leftovers = podman([
    'run',
    '--rm',
    '--network',
    'none',
    '--entrypoint',
    'sh',
    IMAGE,
    '-c',
    `cat ${BUILD_CA} ${BUILD_NPMRC} 2>/dev/null; true`,
  ]);
  // buildah leaves the mount points as empty files: neither the CA bundle nor the npmrc is in them.
  assert.equal(leftovers, '', 'no content of the build mounts is in the image');
});

test('a token created in the state volume as the README says', () => {
  podman(['volume', 'create', volume]);
  const create = (tokenName, scopes) => {
    const out = podman([
      'run',
      '--rm',
      '--network',
      'none',
      '-v',
      `${volume}:/var/lib/powerplan`,
      IMAGE,
      'token',
      'create',
      '--name',
      tokenName,
      '--scopes',
      scopes,
    ]);
    return /^pp_[\w-]+$/m.exec(out)?.[0];
  };
  readToken = create('prometheus', 'read');
  controlToken = create('ops', 'read,control');
  assert.ok(readToken && controlToken, 'both tokens printed');
});

test('runs as a non-root user with a read-only root file system, and /healthz answers 200', async () => {
  // --read-only-tmpfs=false: no writable /tmp either, as Docker's --read-only gives it.
  podman([
    'run',
    '--detach',
    '--name',
    name,
    '--network',
    'host',
    '--read-only',
    '--read-only-tmpfs=false',
    '-v',
    `${volume}:/var/lib/powerplan`,
    '-e',
    `POWERPLAN_PORT=${port}`,
    '-e',
    'POWERPLAN_BACKEND=simulated',
    IMAGE,
  ]);
  const health = await until('/healthz', async () => {
    const r = await fetch(`${url}/healthz`);
    return r.status === 200 && (await r.json());
  }).catch((e) => {
    throw new Error(`${e.message}\n${tryPodman(['logs', name]).stderr}`);
  });
  assert.equal(health.status, 'ok');
  assert.equal(podman(['exec', name, 'id', '-u']), '1000');
  const write = tryPodman(['exec', name, 'sh', '-c', 'touch /app/probe']);
  assert.notEqual(write.status, 0);
  assert.match(write.stderr, /Read-only file system/);
});

test('serves the status page, and /metrics with the read token only', async () => {
  const page = await fetch(`${url}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.match(await page.text(), /powerplan/i);
  assert.equal((await fetch(`${url}/metrics`)).status, 401);
  const metrics = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${readToken}` } });
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /^powerplan_active_plan_info\{.*backend="simulated".*\} 1$/m);
});

test('changes the plan with the control token, and refuses the read token', async () => {
  const put = (token) =>
    fetch(`${url}/v1/plans/active`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'high-performance' }),
    });
  assert.equal((await put(readToken)).status, 403);
  const changed = await put(controlToken);
  assert.equal(changed.status, 200, await changed.clone().text());
  const active = await fetch(`${url}/v1/plans/active`, { headers: { authorization: `Bearer ${readToken}` } });
  assert.equal((await active.json()).plan.kind, 'high-performance');
});

test('the HEALTHCHECK passes when podman runs it', () => {
  const r = tryPodman(['healthcheck', 'run', name]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(podman(['inspect', '--format', '{{.State.Health.Status}}', name]), /^healthy$/);
});

test("reads this host's power plan with the Linux backend from inside (the system bus mounted where there is one)", () => {
  const bus = '/run/dbus/system_bus_socket';
  const args = ['run', '--rm', '--network', 'none', '--read-only', '-v', `${volume}:/var/lib/powerplan`];
  if (existsSync(bus)) args.push('-v', `${bus}:${bus}`);
  const r = tryPodman([...args, '-e', 'POWERPLAN_BACKEND=linux', IMAGE, 'system', '--json']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(JSON.parse(r.stdout).backend.name, 'linux');
});

test('image size and build time', () => {
  const size = (image) => Number(podman(['image', 'inspect', '--format', '{{.Size}}', image]));
  const mb = (bytes) => Math.round(bytes / 1e6);
  const image = size(IMAGE);
  const base = size(BASE_IMAGE);
  const layers = podman(['history', '--no-trunc', '--format', '{{.Size}}\t{{.CreatedBy}}', IMAGE])
    .split('\n')
    .filter((l) => !l.startsWith('0 B'))
    .map(
      (l) =>
        `  ${l.split('\t')[0].padStart(8)}  ${l
          .split('\t')[1]
          .replace(/^\/bin\/sh -c (#\(nop\) )?/, '')
          .slice(0, 90)}`,
    );
  console.log(
    [
      `build: ${buildSeconds} s`,
      `image ${IMAGE}: ${mb(image)} MB; base ${BASE_IMAGE}: ${mb(base)} MB; added: ${mb(image - base)} MB (goal: < 60 MB)`,
      'layers:',
      ...layers,
    ].join('\n'),
  );
  assert.ok(image > base);
});
