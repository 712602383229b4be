/**
 * The local trust boundary, attacked for real as another local user (`nobody`, through runuser)
 * against a service run by root: a state directory planted in /tmp with a symbolic link to a
 * root-owned file, a token file others can write, a tokenless caller asking for control (the plan,
 * a hold, the audit log, the fleet), and the CLI of an unprivileged user pointed at root's state
 * directory. Each attack is first shown to reach its target (where it still could), then refused,
 * and the target is checked unchanged. Needs root and runuser (skipped otherwise, failed in CI).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken, hashToken, newToken } from '../../src/lib/tokens.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { binPath, runCli, type ServerProcess, startServer } from '../support/processes.ts';
import { until } from '../support/until.ts';

const isRoot = process.getuid?.() === 0;
const hasRunuser = spawnSync('runuser', ['--help']).status === 0;
const skip = (!isRoot || !hasRunuser) && process.env.CI !== 'true' ? 'needs root and runuser' : false;

/** Runs a command as `nobody`; resolves with its exit code and output. */
const asNobody = (file: string, args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(
    'runuser',
    ['-u', 'nobody', '--', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), file, ...args],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** `fetch` run by `nobody` in its own node process: the status and body it got. */
const fetchAsNobody = (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) => {
  const script = `const r = await fetch(${JSON.stringify(url)}, ${JSON.stringify(init)}); console.log(JSON.stringify({ status: r.status, body: await r.text() }));`;
  const r = asNobody(process.execPath, ['--input-type=module', '-e', script]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as { status: number; body: string };
};

const json = { 'content-type': 'application/json' };

describe('another local user against a service run by root', { skip }, () => {
  describe('a state directory planted in /tmp', () => {
    let planted: string;
    let targetDir: string;
    let target: string;
    const original = 'export SAFE=1\n';
    before(async () => {
      targetDir = await mkdtemp(join(tmpdir(), 'powerplan-i22-target-'));
      chmodSync(targetDir, 0o755);
      target = join(targetDir, 'profile.sh');
      writeFileSync(target, original, { mode: 0o644 });
      planted = join(tmpdir(), `powerplan-i22-planted-${process.pid}`);
      // What nobody does: a world-writable directory with a link to a root-owned file.
      assert.equal(asNobody('mkdir', ['-m', '777', planted]).code, 0);
      assert.equal(asNobody('ln', ['-s', target, join(planted, 'audit.jsonl')]).code, 0);
    });
    after(async () => {
      await rm(planted, { recursive: true, force: true });
      await rm(targetDir, { recursive: true, force: true });
    });

    it('serve and every command refuse it (exit 2) with the fix, and the root-owned target is untouched', async () => {
      const env = { POWERPLAN_STATE_DIR: planted, POWERPLAN_BACKEND: 'simulated' };
      for (const args of [['serve'], ['set', 'power-saver'], ['active']]) {
        const r = await runCli(args, env);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.match(
          r.stderr,
          /state directory .*powerplan-i22-planted.* belongs to another user \(uid 65534\)/,
        );
        assert.match(r.stderr, /install -d -m 0700/);
      }
      assert.equal(readFileSync(target, 'utf8'), original);
      assert.ok(lstatSync(join(planted, 'audit.jsonl')).isSymbolicLink(), 'nothing was replaced either');
    });

    it('a link planted inside a safe state directory is never followed: the append is refused', async () => {
      const t = await testDeps();
      try {
        const { symlinkSync } = await import('node:fs');
        symlinkSync(target, join(t.dir, 'audit.jsonl'));
        await assert.rejects(
          t.deps.store.append('audit.jsonl', { reason: '$(id > /tmp/pwned)' }),
          /audit log .* is a symbolic link, which the service never follows/,
        );
        assert.equal(readFileSync(target, 'utf8'), original);
      } finally {
        await t.cleanup();
      }
    });

    it('a missing state directory under sticky /tmp is refused: another user could create it first', async () => {
      const missing = join(tmpdir(), `powerplan-i22-missing-${process.pid}`);
      const r = await runCli(['active'], { POWERPLAN_STATE_DIR: missing, POWERPLAN_BACKEND: 'simulated' });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /does not exist, and \/tmp is writable by other users \(mode 1777\)/);
      assert.match(r.stderr, new RegExp(`install -d -m 0700 ${missing}`));
      assert.equal(existsSync(missing), false);
    });
  });

  describe('the token file', () => {
    let t: TestDeps;
    let dir: string;
    before(async () => {
      t = await testDeps();
      // A directory nobody may enter, as /etc/powerplan would be; only the file's mode is wrong.
      dir = mkdtempSync(join(tmpdir(), 'powerplan-i22-tokens-'));
      chmodSync(dir, 0o755);
    });
    after(async () => {
      await t.cleanup();
      await rm(dir, { recursive: true, force: true });
    });

    it('chmod 666: the start is refused (exit 2); at a reload the old tokens stay and nobody’s own is refused', async () => {
      const file = join(dir, 'tokens.json');
      const { token } = await createToken(file, 'ops', ['control']);
      chmodSync(file, 0o666);
      const refused = await runCli(['serve'], { ...t.env, POWERPLAN_TOKEN_FILE: file });
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /token file .* is writable by group or others \(mode 0666\).*chmod go-w/);

      chmodSync(file, 0o600);
      const server = await startServer({ ...t.env, POWERPLAN_TOKEN_FILE: file, POWERPLAN_LOG_LEVEL: 'warn' });
      try {
        let log = '';
        server.child.stderr!.on('data', (d) => {
          log += d;
        });
        chmodSync(file, 0o666);
        // nobody adds its own control token to the file.
        const mine = newToken();
        const entries = JSON.parse(readFileSync(file, 'utf8')) as { tokens: unknown[] };
        entries.tokens.push({
          name: 'mine',
          scopes: ['control'],
          sha256: hashToken(mine),
          created: new Date().toISOString(),
        });
        const write = asNobody(process.execPath, [
          '-e',
          `require('node:fs').writeFileSync(${JSON.stringify(file)}, ${JSON.stringify(JSON.stringify(entries))})`,
        ]);
        assert.equal(write.code, 0, write.stderr);
        const put = fetchAsNobody(`${server.url}/v1/plans/active`, {
          method: 'PUT',
          headers: { ...json, authorization: `Bearer ${mine}` },
          body: JSON.stringify({ plan: 'power-saver' }),
        });
        assert.equal(put.status, 401, put.body);
        const ok = await fetch(`${server.url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(ok.status, 200, 'the tokens read before stay in force');
        await until('the log says why', () => /writable by group or others/.test(log), 5_000);
        assert.equal((await t.deps.backend.getActive()).plan?.kind, 'balanced');
      } finally {
        await server.stop();
      }
    });
  });

  describe('a tokenless caller in the default mode', () => {
    let t: TestDeps;
    let server: ServerProcess;
    let fleetDir: string;
    before(async () => {
      t = await testDeps();
      // The service's state directory is root's (0700): nobody can neither read nor enter it.
      fleetDir = mkdtempSync(join(tmpdir(), 'powerplan-i22-fleet-'));
      const agentToken = join(fleetDir, 'agent.token');
      writeFileSync(agentToken, `${newToken()}\n`, { mode: 0o600 });
      const fleet = join(fleetDir, 'fleet.json');
      writeFileSync(
        fleet,
        JSON.stringify({ hosts: [{ name: 'db1', url: 'http://127.0.0.1:9', tokenFile: agentToken }] }),
        { mode: 0o600 },
      );
      server = await startServer({ ...t.env, POWERPLAN_FLEET_FILE: fleet });
    });
    after(async () => {
      await server.stop();
      await t.cleanup();
      await rm(fleetDir, { recursive: true, force: true });
    });

    it('as nobody: reads, but changing the plan, holding, enforcing, comparing, benchmarking, the audit log and the fleet are refused (403)', () => {
      assert.equal(fetchAsNobody(`${server.url}/v1/plans/active`).status, 200);
      const attempts: [string, string, unknown?][] = [
        ['PUT', '/v1/plans/active', { plan: 'power-saver' }],
        ['POST', '/v1/holds', { plan: 'power-saver', for: '7d', reason: '$(touch /tmp/pwned)' }],
        ['PUT', '/v1/desired', { plan: 'power-saver', enforce: true }],
        ['POST', '/v1/comparisons', { dryRun: true }],
        ['POST', '/v1/benchmarks', { force: true }],
        ['GET', '/v1/audit'],
        ['PUT', '/v1/fleet/plans/active', { plan: 'power-saver' }],
      ];
      for (const [method, path, body] of attempts) {
        const r = fetchAsNobody(`${server.url}${path}`, {
          method,
          ...(body ? { headers: json, body: JSON.stringify(body) } : {}),
        });
        assert.equal(r.status, 403, `${method} ${path}: ${r.body}`);
        assert.match(r.body, /needs the '(control|benchmark)' scope; the caller 'local' does not have it/);
      }
    });

    it('as nobody: the local administrator credential cannot be read; as root it can, and has control', async () => {
      const path = join(t.dir, 'admin.token');
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.notEqual(asNobody('cat', [path]).code, 0);
      const res = await fetch(`${server.url}/v1/plans/active`, {
        method: 'PUT',
        headers: { ...json, ...server.asAdmin },
        body: JSON.stringify({ plan: 'high-performance' }),
      });
      assert.equal(res.status, 200, await res.text());
      assert.equal((await t.deps.backend.getActive()).plan?.kind, 'high-performance');
      const who = await (await fetch(`${server.url}/v1/whoami`, { headers: server.asAdmin })).json();
      assert.deepEqual(who, {
        name: 'local-admin',
        scopes: ['control'],
        allows: ['read', 'benchmark', 'control'],
      });
    });

    it("as nobody: the CLI pointed at root's state directory stops (exit 2) and changes nothing", () => {
      const r = asNobody(process.execPath, [binPath, 'set', 'power-saver'], {
        POWERPLAN_STATE_DIR: t.dir,
        POWERPLAN_BACKEND: 'simulated',
        HOME: '/tmp',
      });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /cannot write it: run powerplan as the service's user/);
    });

    it("as root: the CLI needs no token (it acts with root's own rights)", async () => {
      const r = await runCli(['set', 'balanced'], t.env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await t.deps.backend.getActive()).plan?.kind, 'balanced');
    });
  });
});
