/**
 * What the container image relies on, tested without a Docker engine: the HEALTHCHECK script
 * against a real `powerplan serve` over HTTP and over HTTPS (it checks the certificate the server
 * presents against POWERPLAN_TLS_CERT), the state ownership check at start (a state volume written
 * by root, then used by an unprivileged user: one line, exit 2), and the Dockerfile wiring both
 * and the host clients the README promises.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/deps.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { binPath, startServer } from '../support/processes.ts';
import { makeTestCertificate } from '../support/tls.ts';
import { run } from './tools.ts';

const healthcheck = join(repoRoot, 'deploy', 'container', 'healthcheck.mjs');
const check = (env: Record<string, string>) =>
  run(process.execPath, [healthcheck], { env: { PATH: process.env.PATH ?? '', ...env }, timeoutMs: 20_000 });
const portOf = (url: string) => new URL(url).port;

describe('container healthcheck script', () => {
  const t = depsPerBlock();

  it('is healthy over HTTP, and unhealthy once the server is gone', async () => {
    const server = await startServer(t.env);
    try {
      const r = await check({ POWERPLAN_PORT: portOf(server.url) });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(r.stdout, 'healthy: ok\n');
    } finally {
      await server.stop();
    }
    const gone = await check({ POWERPLAN_PORT: portOf(server.url) });
    assert.equal(gone.code, 1);
    assert.match(gone.stdout, /^unhealthy: http:\/\/127\.0\.0\.1:\d+\/healthz: .*ECONNREFUSED/);
  });

  it('is healthy over HTTPS with the TLS settings of the service, and refuses another certificate', async () => {
    const dir = join(t.dir, 'tls');
    await mkdir(dir);
    const { cert, key } = makeTestCertificate(dir);
    const other = join(t.dir, 'other');
    await mkdir(other);
    const stranger = makeTestCertificate(other);
    const tls = { POWERPLAN_TLS_CERT: cert, POWERPLAN_TLS_KEY: key };
    const server = await startServer({ ...t.env, ...tls });
    try {
      assert.match(server.url, /^https:/);
      const port = portOf(server.url);
      const ok = await check({ ...tls, POWERPLAN_PORT: port, POWERPLAN_HOST: '0.0.0.0' });
      assert.equal(ok.code, 0, ok.stdout + ok.stderr);
      assert.equal(ok.stdout, 'healthy: ok\n');
      // The old check (plain HTTP) against the TLS server fails, as it did in the image.
      const plain = await check({ POWERPLAN_PORT: port });
      assert.equal(plain.code, 1);
      const wrong = await check({ POWERPLAN_TLS_CERT: stranger.cert, POWERPLAN_PORT: port });
      assert.equal(wrong.code, 1);
      assert.match(wrong.stdout, /does not present the certificate in .*other\/cert\.pem/);
    } finally {
      await server.stop();
    }
  });
});

describe('state ownership checked at start', () => {
  const t = depsPerBlock();

  it('a state directory with root-owned files stops an unprivileged start: one line, exit 2, how to fix it', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip('needs root to write as one user and start as another');
    const state = join(t.dir, 'state');
    await mkdir(state);
    await chmod(t.dir, 0o755);
    // What `docker run --user 0` leaves in the volume: files of root, mode 0600.
    await writeFile(join(state, 'holds.json'), '{"holds":[]}\n', { mode: 0o600 });
    await writeFile(join(state, 'audit.jsonl'), '', { mode: 0o600 });
    await chown(state, 65534, 65534);
    const serve = () =>
      spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, binPath, 'serve', '--port', '0'], {
        encoding: 'utf8',
        timeout: 30_000,
        env: { PATH: process.env.PATH ?? '', HOME: '/tmp', ...t.env, POWERPLAN_STATE_DIR: state },
      });
    const r = serve();
    assert.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0]!,
      /^powerplan: cannot start: the state directory .*state has (audit\.jsonl, holds\.json|holds\.json, audit\.jsonl) \(owned by uid 0\) that this user \(uid 65534\) cannot read and write\. .*chown -R 65534:65534 /,
    );
    // Given to that user as the message says, the same start gets going.
    for (const f of ['holds.json', 'audit.jsonl']) await chown(join(state, f), 65534, 65534);
    const again = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, binPath, 'plans'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH ?? '', HOME: '/tmp', ...t.env, POWERPLAN_STATE_DIR: state },
    });
    assert.equal(again.status, 0, again.stderr);
  });
});

describe('Dockerfile', () => {
  it('runs the healthcheck script, carries the host clients and says which hosts it can drive', async () => {
    const dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /^COPY deploy\/container\/healthcheck\.mjs /m);
    assert.match(dockerfile, /^HEALTHCHECK .*\n\s+CMD \["node", "[^"]*healthcheck\.mjs"\]/m);
    assert.match(dockerfile, /apt-get install -y --no-install-recommends [^\n]*\btuned\b/);
    assert.match(dockerfile, /apt-get install -y --no-install-recommends [^\n]*\bpower-profiles-daemon\b/);
    assert.match(dockerfile, /\/run\/dbus\/system_bus_socket/);
    const readme = await readFile(join(repoRoot, 'README.md'), 'utf8');
    for (const words of [/system_bus_socket/, /--user 0/, /chown -R/, /sysfs/])
      assert.match(readme.split('**Docker**')[1]!.split('**systemd**')[0]!, words);
  });
});
