import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/lib/log.ts';
import { createToken, parseScopes, revokeToken } from '../../src/lib/tokens.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { loadHttpSecurity } from '../../src/surfaces/http/security.ts';
import { opensslInstall, requireTool, toolRuns } from '../integrations/tools.ts';
import { depsPerBlock, perBlock } from '../support/fixture.ts';
import { runCli, startServer } from '../support/processes.ts';
import { makeTestCertificate } from '../support/tls.ts';
import { bearer, secureHarness, strangerToken } from './harness.ts';

const silent = createLogger('silent');
const TOKEN = /^pp_[A-Za-z0-9_-]{43}$/;

describe('token commands', () => {
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-tok-'));
    env = {
      POWERPLAN_STATE_DIR: dir,
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_LOG_LEVEL: 'silent',
      POWERPLAN_TOKEN_FILE: join(dir, 'etc', 'tokens.json'),
    };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('create prints the token once; the file keeps only its hash, readable by the owner only', async () => {
    const r = await runCli(['token', 'create', '--name', 'ci', '--scopes', 'read,control'], env);
    assert.equal(r.code, 0, r.stderr);
    const token = r.stdout.trim();
    assert.match(token, TOKEN);
    assert.match(r.stderr, /shown only this once/);
    const text = await readFile(env.POWERPLAN_TOKEN_FILE!, 'utf8');
    assert.ok(!text.includes(token), 'the token file never holds the token');
    const file = JSON.parse(text);
    assert.equal(file.tokens[0].name, 'ci');
    assert.deepEqual(file.tokens[0].scopes, ['read', 'control']);
    assert.match(file.tokens[0].sha256, /^[0-9a-f]{64}$/);
    if (process.platform !== 'win32') {
      assert.equal((await stat(env.POWERPLAN_TOKEN_FILE!)).mode & 0o777, 0o600);
    }
    const second = await runCli(['token', 'create', '--name', 'other', '--scopes', 'read', '--json'], env);
    const created = JSON.parse(second.stdout);
    assert.match(created.token, TOKEN);
    assert.notEqual(created.token, token);
  });

  it('list shows names, scopes and creation time, never a hash or token', async () => {
    const r = await runCli(['token', 'list', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const { tokens } = JSON.parse(r.stdout);
    assert.deepEqual(
      tokens.map((t: { name: string }) => t.name),
      ['ci', 'other'],
    );
    for (const t of tokens) assert.deepEqual(Object.keys(t).sort(), ['created', 'name', 'scopes']);
    const human = await runCli(['token', 'list'], env);
    assert.match(human.stdout, /^ci\s+read,control\s+\d{4}-/m);
    const [head, ...rows] = human.stdout.trimEnd().split('\n');
    assert.match(head!, /^NAME {2,}SCOPES {2,}CREATED$/);
    for (const row of rows) {
      assert.match(row.slice(head!.indexOf('SCOPES')), /^read/, 'the scopes line up under SCOPES');
      assert.match(
        row.slice(head!.indexOf('CREATED')),
        /^\d{4}-/,
        'the creation times line up under CREATED',
      );
    }
  });

  it('refuses bad names, unknown scopes, duplicates; revoke removes by name', async () => {
    const file = env.POWERPLAN_TOKEN_FILE!;
    for (const name of ['../x', 'a b', 'local', 'Service', '$(reboot)', '', 'x'.repeat(64), 'ci']) {
      await assert.rejects(createToken(file, name, ['read']), /--name|exists already/, name);
    }
    for (const scopes of ['admin', '', ',', 'read;control']) {
      assert.throws(() => parseScopes(scopes), /--scopes/, scopes);
    }
    const r = await runCli(['token', 'create', '--name', '$(reboot)', '--scopes', 'read'], env);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '', 'no token printed');
    assert.equal((await runCli(['token', 'revoke', 'other'], env)).code, 0);
    assert.equal((await runCli(['token', 'revoke', 'other'], env)).code, 1);
    const { tokens } = JSON.parse((await runCli(['token', 'list', '--json'], env)).stdout);
    assert.deepEqual(
      tokens.map((t: { name: string }) => t.name),
      ['ci'],
    );
  });

  it('without a token file the commands say how to configure one (exit 2)', async () => {
    const { POWERPLAN_TOKEN_FILE: _unused, ...noFile } = env;
    const r = await runCli(['token', 'create', '--name', 'x', '--scopes', 'read'], noFile);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /POWERPLAN_TOKEN_FILE.*--token-file/s);
  });
});

describe('authentication with a token file', () => {
  const h = perBlock(
    () => secureHarness(),
    (x) => x.cleanup(),
  );

  it('tokens created or revoked while running take effect on the next request', async () => {
    const { token } = await createToken(h.tokenFile, 'late', ['read']);
    assert.equal((await h.app.request('/v1/plans', { headers: bearer(token) })).status, 200);
    await revokeToken(h.tokenFile, 'late');
    assert.equal((await h.app.request('/v1/plans', { headers: bearer(token) })).status, 401);
    assert.equal((await h.app.request('/v1/plans', { headers: bearer(h.tokens.read) })).status, 200);
  });

  it('a token file that turns invalid rejects every token (fail closed) until fixed', async () => {
    const good = await readFile(h.tokenFile, 'utf8');
    await writeFile(h.tokenFile, '{"tokens": [ {"name": ');
    const res = await h.app.request('/v1/plans', { headers: bearer(h.tokens.control) });
    assert.equal(res.status, 401);
    assert.match(((await res.json()) as { detail: string }).detail, /token file on the server is invalid/);
    await writeFile(h.tokenFile, good);
    assert.equal((await h.app.request('/v1/plans', { headers: bearer(h.tokens.control) })).status, 200);
  });

  it('the caller is recorded by token name and remote address, and no token reaches the log or the audit', async () => {
    const remote = { incoming: { socket: { remoteAddress: '10.1.2.3' } } };
    const set = (token: string, plan: string) =>
      h.app.request(
        '/v1/plans/active',
        {
          method: 'PUT',
          headers: { 'content-type': 'application/json', ...bearer(token) },
          body: JSON.stringify({ plan }),
        },
        remote,
      );
    assert.equal((await set(h.tokens.control, 'high-performance')).status, 200);
    assert.equal((await set(h.tokens.read, 'balanced')).status, 403);
    assert.equal((await set(strangerToken, 'balanced')).status, 401);
    assert.equal((await set(`${h.tokens.control}x`, 'balanced')).status, 401);
    // A token pasted into a field is refused as a plan and not echoed into the audit.
    assert.equal((await set(h.tokens.control, h.tokens.control)).status, 404);

    const res = await h.app.request('/v1/audit', { headers: bearer(h.tokens.control) });
    assert.equal(res.status, 200);
    const audit = (await res.json()) as { records: { caller: string; remote?: string; result: string }[] };
    // The 403 and the 404 are refused attempts, audited; the 401s never reached an operation.
    assert.deepEqual(
      audit.records.map((r) => [r.caller, r.remote, r.result]),
      [
        ['control-token', '10.1.2.3', 'changed'],
        ['read-token', '10.1.2.3', 'refused'],
        ['control-token', '10.1.2.3', 'refused'],
      ],
    );
    assert.ok(
      h.logLines.some((l) => l.includes('request refused')),
      'refusals are logged',
    );
    const auditText = await readFile(h.t.deps.store.path('audit.jsonl'), 'utf8');
    for (const token of [...Object.values(h.tokens), strangerToken]) {
      const stem = token.slice(3, 20);
      assert.ok(!auditText.includes(stem), 'audit holds no token');
      assert.ok(!h.logLines.join('\n').includes(stem), 'log holds no token');
      assert.ok(!JSON.stringify(audit).includes(stem), 'audit answer holds no token');
    }
  });

  it('the audit read-back validates its input and needs the control scope', async () => {
    const get = (q: string, token = h.tokens.control) =>
      h.app.request(`/v1/audit${q}`, { headers: bearer(token) });
    assert.equal((await get('', h.tokens.benchmark)).status, 403);
    for (const q of [
      '?limit=0',
      '?limit=1001',
      '?limit=abc',
      '?since=yesterday',
      '?since=1&since=2',
      '?x=1',
    ]) {
      assert.equal((await get(q)).status, 400, q);
    }
    const future = await (await get(`?since=${encodeURIComponent('2999-01-01T00:00:00Z')}`)).json();
    assert.deepEqual(future, { records: [], truncated: false });
  });
});

describe('safe defaults', () => {
  const t = depsPerBlock();

  const appFor = async (env: Record<string, string>) => {
    const config = loadConfig({ ...t.env, ...env });
    const sec = await loadHttpSecurity(config, silent);
    return createApp({ ...t.deps, config }, sec);
  };

  it('without a token file: local callers are served, other addresses get 403', async () => {
    const app = await appFor({});
    assert.equal((await app.request('/v1/plans')).status, 200, 'in-process');
    for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const env = { incoming: { socket: { remoteAddress: local } } };
      assert.equal((await app.request('/v1/plans', {}, env)).status, 200, local);
    }
    const env = { incoming: { socket: { remoteAddress: '192.168.1.20' } } };
    const res = await app.request('/v1/plans', {}, env);
    assert.equal(res.status, 403);
    assert.match(((await res.json()) as { detail: string }).detail, /POWERPLAN_TOKEN_FILE/);
  });

  it('refuses to listen beyond loopback without a token file, saying what to do (exit 2)', async () => {
    await assert.rejects(
      loadHttpSecurity(loadConfig({ ...t.env, POWERPLAN_HOST: '0.0.0.0' }), silent),
      /POWERPLAN_HOST: refusing to listen on 0\.0\.0\.0 without a token file.*POWERPLAN_TOKEN_FILE/s,
    );
    const r = await runCli(['serve'], { ...t.env, POWERPLAN_HOST: '0.0.0.0', POWERPLAN_PORT: '0' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /token create/);
  });

  it('rejects half a TLS setup, bad CORS origins and bad frame-ancestors', async () => {
    for (const [env, re] of [
      [{ POWERPLAN_TLS_CERT: '/nonexistent.pem' }, /POWERPLAN_TLS_KEY/],
      [
        { POWERPLAN_TLS_CERT: '/nonexistent.pem', POWERPLAN_TLS_KEY: '/nonexistent.key' },
        /POWERPLAN_TLS_CERT\) cannot be read/,
      ],
      [{ POWERPLAN_CORS_ORIGINS: '*' }, /POWERPLAN_CORS_ORIGINS/],
      [{ POWERPLAN_CORS_ORIGINS: 'https://a.example/path' }, /POWERPLAN_CORS_ORIGINS/],
      [{ POWERPLAN_FRAME_ANCESTORS: "'self' javascript:" }, /POWERPLAN_FRAME_ANCESTORS/],
    ] as const) {
      await assert.rejects(loadHttpSecurity(loadConfig({ ...t.env, ...env }), silent), re);
    }
  });

  it('sends security headers; frame ancestors are configurable', async () => {
    const res = await (await appFor({})).request('/healthz');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN');
    assert.equal(res.headers.get('content-security-policy'), "frame-ancestors 'self'");
    assert.equal(res.headers.get('access-control-allow-origin'), null, 'CORS is off by default');
    const portal = await appFor({ POWERPLAN_FRAME_ANCESTORS: "'self' https://portal.example.com" });
    const framed = await portal.request('/healthz');
    assert.equal(
      framed.headers.get('content-security-policy'),
      "frame-ancestors 'self' https://portal.example.com",
    );
    assert.equal(framed.headers.get('x-frame-options'), null);
  });

  it('CORS answers only the listed origins, and a preflight needs no token', async () => {
    const app = await appFor({ POWERPLAN_CORS_ORIGINS: 'https://portal.example.com, http://localhost:3000' });
    const preflight = (origin: string) =>
      app.request('/v1/plans', {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
    const ok = await preflight('https://portal.example.com');
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), 'https://portal.example.com');
    assert.match(ok.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    const evil = await preflight('https://evil.example.com');
    assert.equal(evil.headers.get('access-control-allow-origin'), null);
    const get = await app.request('/v1/plans', { headers: { origin: 'http://localhost:3000' } });
    assert.equal(get.headers.get('access-control-allow-origin'), 'http://localhost:3000');
  });

  it('serves HTTPS with POWERPLAN_TLS_CERT / POWERPLAN_TLS_KEY', async (ctx) => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-tls-'));
    try {
      if (!requireTool(ctx, toolRuns('openssl', ['version']), 'openssl', opensslInstall)) return;
      const { cert, key } = makeTestCertificate(dir);
      const server = await startServer({ ...t.env, POWERPLAN_TLS_CERT: cert, POWERPLAN_TLS_KEY: key });
      try {
        assert.match(server.url, /^https:\/\//);
        const { status, hsts } = await new Promise<{ status?: number; hsts?: string }>((resolve, reject) => {
          const req = httpsRequest(`${server.url}/healthz`, { rejectUnauthorized: false }, (res) => {
            res.resume();
            resolve({ status: res.statusCode, hsts: res.headers['strict-transport-security'] as string });
          });
          req.on('error', reject);
          req.end();
        });
        assert.equal(status, 200);
        assert.match(hsts ?? '', /max-age=/);
      } finally {
        assert.equal(await server.stop(), 0);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
