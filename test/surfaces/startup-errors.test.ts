/**
 * `powerplan serve` that cannot start says why in one line and exits 2 (a usage/setup error, like a
 * bad setting), with no stack: the port in use, an address that is not this machine's, and a TLS
 * certificate that is missing, unreadable for the user, not PEM, or whose key does not match.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, chown, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/lib/tokens.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { binPath, runCli } from '../support/processes.ts';
import { makeTestCertificate } from '../support/tls.ts';

const assertOneLine = (r: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) => {
  assert.equal(r.code, 2, `exit code (stderr: ${r.stderr})`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.match(lines[0]!, /^powerplan: cannot start: /);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(r.stderr, /\bat .+:\d+:\d+|Internal error/);
  assert.doesNotMatch(r.stdout, /listening/);
};

describe('serve: start-up errors are one line and exit 2', () => {
  const t = depsPerBlock();
  let busy: Server;
  let busyPort: number;
  before(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    busyPort = (busy.address() as { port: number }).port;
  });
  after(() => new Promise<void>((r) => busy.close(() => r())));

  it('a port in use names the address and the setting to change', async () => {
    const r = await runCli(['serve', '--port', String(busyPort)], t.env);
    assertOneLine(r, new RegExp(`127\\.0\\.0\\.1:${busyPort} is already in use.*--port or POWERPLAN_PORT`));
  });

  it('an address that is not this machine’s (with a token file, so the host is allowed)', async () => {
    const tokenFile = join(t.dir, 'tokens.json');
    await createToken(tokenFile, 'ops', ['read']);
    // 192.0.2.1 is a documentation address (RFC 5737): binding to it fails locally, nothing is sent.
    const r = await runCli(['serve', '--host', '192.0.2.1', '--port', '0', '--token-file', tokenFile], t.env);
    assertOneLine(r, /192\.0\.2\.1 is not an address of this machine.*POWERPLAN_HOST/);
  });

  it('a TLS certificate that is missing, not PEM, or whose key does not match', async () => {
    const dir = join(t.dir, 'tls');
    await mkdir(dir);
    const a = makeTestCertificate(dir);
    const otherDir = join(t.dir, 'tls-other');
    await mkdir(otherDir);
    const b = makeTestCertificate(otherDir);
    const junk = join(dir, 'junk.pem');
    await writeFile(junk, 'not a certificate\n');
    const serve = (cert: string, key: string) =>
      runCli(['serve', '--port', '0', '--tls-cert', cert, '--tls-key', key], t.env);

    assertOneLine(
      await serve(join(dir, 'missing.pem'), a.key),
      /TLS certificate .*missing\.pem \(POWERPLAN_TLS_CERT\) cannot be read: no such file/,
    );
    assertOneLine(await serve(junk, a.key), /junk\.pem .*cannot be used/);
    assertOneLine(await serve(a.cert, b.key), /cannot be used/);
  });

  it('a key that this user may not read (run as nobody)', (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip('needs root to run as another user');
    // A state directory and certificate of nobody's own, and a key only root may read.
    const run = async () => {
      const dir = join(t.dir, 'nobody');
      await mkdir(dir, { recursive: true });
      const { cert, key } = makeTestCertificate(dir);
      const state = join(dir, 'state');
      await mkdir(state);
      await chown(state, 65534, 65534);
      await chmod(dir, 0o755);
      await chmod(cert, 0o644);
      await copyFile(key, join(dir, 'root-only.pem'));
      await chmod(join(dir, 'root-only.pem'), 0o600);
      await chmod(t.dir, 0o755);
      return spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, binPath, 'serve', '--port', '0'], {
        encoding: 'utf8',
        timeout: 30_000,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: '/tmp',
          ...t.env,
          POWERPLAN_STATE_DIR: state,
          POWERPLAN_TLS_CERT: cert,
          POWERPLAN_TLS_KEY: join(dir, 'root-only.pem'),
        },
      });
    };
    return run().then((r) =>
      assertOneLine(
        { code: r.status, stdout: r.stdout, stderr: r.stderr },
        /TLS key .*root-only\.pem \(POWERPLAN_TLS_KEY\) cannot be read: permission denied for this user/,
      ),
    );
  });
});
