/**
 * The front-door guard on a real server (port 0), over REST and /mcp: every route x Host x Origin x
 * Content-Type x mode (no token file and no token, no token file with the local administrator
 * credential, a valid token) answers the expected status, and a refused request changes nothing
 * (the active plan and the holds are checked after every request). Without a token a caller may
 * only read, and a listed CORS origin counts only with a token.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/lib/tokens.ts';
import { type RunningServer, startHttpServer } from '../../src/surfaces/http/server.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { readAdminToken } from '../support/processes.ts';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over its own connection to the server's loopback port, with exactly these headers. */
export const send = (
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const { port } = new URL(url);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...headers,
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
        },
        setHost: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

const PORTAL = 'https://portal.example.com';
const contentTypes = {
  json: 'application/json; charset=utf-8',
  text: 'text/plain',
  form: 'application/x-www-form-urlencoded',
} as const;
type ContentKind = keyof typeof contentTypes;
const originKinds = ['none', 'self', 'listed', 'foreign'] as const;
type OriginKind = (typeof originKinds)[number];

interface Route {
  name: string;
  method: string;
  path: string;
  /** The body, given the plan in force (a change always asks for another plan, to be visible). */
  body?: (plan: string | undefined) => string;
  ok: number;
  /** Changes the state: the check after each request expects a change only when accepted. */
  changes?: 'plan' | 'hold';
  /** Needs the control scope: refused to a caller without a token (403; an MCP tool error). */
  control?: true;
}

const kinds = ['power-saver', 'high-performance', 'balanced'];
const mcpCall = (name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

const routes: Route[] = [
  { name: 'GET /v1/plans/active', method: 'GET', path: '/v1/plans/active', ok: 200 },
  { name: 'GET /v1/audit', method: 'GET', path: '/v1/audit', ok: 200, control: true },
  {
    name: 'PUT /v1/plans/active',
    method: 'PUT',
    path: '/v1/plans/active',
    body: (plan) => JSON.stringify({ plan: kinds.find((k) => k !== plan), force: true }),
    ok: 200,
    changes: 'plan',
    control: true,
  },
  {
    name: 'POST /v1/holds',
    method: 'POST',
    path: '/v1/holds',
    body: () => JSON.stringify({ plan: 'power-saver', for: '7d' }),
    ok: 201,
    changes: 'hold',
    control: true,
  },
  {
    name: 'POST /mcp hold_power_plan',
    method: 'POST',
    path: '/mcp',
    body: () => mcpCall('hold_power_plan', { plan: 'power-saver', for: '7d' }),
    ok: 200,
    changes: 'hold',
    control: true,
  },
];

for (const mode of ['no token file', 'admin credential', 'token'] as const) {
  describe(`front-door guard matrix, ${mode}`, () => {
    let t: TestDeps;
    let server: RunningServer;
    let tokDir: string;
    let auth: Record<string, string> = {};
    let port: string;

    before(async () => {
      tokDir = await mkdtemp(join(tmpdir(), 'powerplan-guard-'));
      const env: Record<string, string> = { POWERPLAN_CORS_ORIGINS: PORTAL };
      if (mode === 'token') {
        const tokenFile = join(tokDir, 'tokens.json');
        const { token } = await createToken(tokenFile, 'ops', ['control']);
        env.POWERPLAN_TOKEN_FILE = tokenFile;
        auth = { authorization: `Bearer ${token}` };
      }
      t = await testDeps(env);
      server = await startHttpServer({ ...t.deps, config: { ...t.deps.config, port: 0 } });
      port = new URL(server.url).port;
      if (mode === 'admin credential') auth = { authorization: `Bearer ${readAdminToken(t.dir)}` };
    });
    const tokenless = mode === 'no token file';
    after(async () => {
      await server.close();
      await t.cleanup();
      await rm(tokDir, { recursive: true, force: true });
    });

    const local = () => ({ host: `127.0.0.1:${port}`, ...auth });
    const state = async () => {
      const active = await send(server.url, 'GET', '/v1/plans/active', local());
      const holds = await send(server.url, 'GET', '/v1/holds', local());
      assert.equal(active.status, 200, active.body);
      assert.equal(holds.status, 200, holds.body);
      return {
        plan: (JSON.parse(active.body) as { plan: { kind: string } }).plan.kind,
        holds: (JSON.parse(holds.body) as { holds: unknown[] }).holds.length,
      };
    };

    it('answers every route x Host x Origin x Content-Type as expected, and refusals change nothing', async () => {
      const hosts = [
        `127.0.0.1:${port}`,
        `localhost:${port}`,
        `[::1]:${port}`,
        `rebind.attacker.example:${port}`,
      ];
      const counts = { accepted: 0, refused: 0 };
      for (const route of routes) {
        for (const host of hosts) {
          for (const originKind of originKinds) {
            for (const ct of (route.body ? Object.keys(contentTypes) : ['json']) as ContentKind[]) {
              const origin: Record<OriginKind, string | undefined> = {
                none: undefined,
                self: `http://${host}`,
                listed: PORTAL,
                foreign: 'https://evil.example',
              };
              const headers: Record<string, string> = {
                host,
                ...auth,
                ...(origin[originKind] ? { origin: origin[originKind] } : {}),
                ...(route.body ? { 'content-type': contentTypes[ct] } : {}),
                ...(route.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {}),
              };
              const hostOk = !tokenless || !host.startsWith('rebind.');
              const originOk =
                originKind === 'none' || originKind === 'self' || (originKind === 'listed' && !tokenless);
              // MCP answers a tool the caller may not use as a tool error (isError), not an HTTP status.
              const scopeOk = !tokenless || !route.control || route.path === '/mcp';
              const expected = !hostOk || !originOk ? 403 : ct !== 'json' ? 415 : !scopeOk ? 403 : route.ok;
              const mcpRefused = route.path === '/mcp' && tokenless && route.control === true;
              const label = `${route.name} Host ${host} Origin ${originKind} ${ct}`;
              const before = route.changes ? await state() : undefined;
              const res = await send(
                server.url,
                route.method,
                route.path,
                headers,
                route.body?.(before?.plan),
              );
              assert.equal(res.status, expected, `${label}: ${res.body}`);
              if (expected >= 400) {
                assert.match(String(res.headers['content-type']), /^application\/problem\+json/, label);
                counts.refused++;
              } else counts.accepted++;
              if (route.path === '/mcp' && expected === 200) {
                if (mcpRefused) assert.match(res.body, /"isError":true.*needs the 'control' scope/, label);
                else assert.doesNotMatch(res.body, /"isError":true/, label);
              }
              if (before) {
                const now = await state();
                const accepted = expected < 400 && !mcpRefused;
                if (route.changes === 'hold')
                  assert.equal(now.holds, before.holds + (accepted ? 1 : 0), label);
                if (route.changes === 'plan' && !accepted) assert.equal(now.plan, before.plan, label);
                if (route.changes === 'plan' && accepted) assert.notEqual(now.plan, before.plan, label);
              }
            }
          }
        }
      }
      // Both outcomes were exercised in bulk.
      assert.ok(counts.accepted > (tokenless ? 8 : 20) && counts.refused > 100, JSON.stringify(counts));
    });

    it('refuses Sec-Fetch-Site: cross-site without an accepted Origin, and lets a listed one through with a token', async () => {
      const path = '/v1/plans/active';
      const cross = { ...local(), 'sec-fetch-site': 'cross-site' };
      assert.equal((await send(server.url, 'GET', path, cross)).status, 403);
      const listed = await send(server.url, 'GET', path, { ...cross, origin: PORTAL });
      assert.equal(listed.status, tokenless ? 403 : 200, listed.body);
      const same = { ...local(), 'sec-fetch-site': 'same-origin', origin: `http://127.0.0.1:${port}` };
      assert.equal((await send(server.url, 'GET', path, same)).status, 200);
      assert.equal(
        (await send(server.url, 'GET', path, { ...local(), 'sec-fetch-site': 'none' })).status,
        200,
      );
      // Without a token, a page of a sibling site (an <img>, a form) is refused too.
      const sameSite = await send(server.url, 'GET', path, { ...local(), 'sec-fetch-site': 'same-site' });
      assert.equal(sameSite.status, tokenless ? 403 : 200, sameSite.body);
      if (tokenless) assert.match(sameSite.body, /Sec-Fetch-Site: same-site/);
    });

    it('answers a listed portal origin’s preflight, and its request only with a token', async () => {
      const pre = await send(server.url, 'OPTIONS', '/v1/plans/active', {
        host: `powerplan.example.net:${port}`,
        origin: PORTAL,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization, content-type',
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], PORTAL);
      const get = await send(server.url, 'GET', '/v1/plans/active', {
        host: tokenless ? `127.0.0.1:${port}` : `powerplan.example.net:${port}`,
        origin: PORTAL,
        ...auth,
      });
      if (tokenless) {
        assert.equal(get.status, 403, get.body);
        assert.match(get.body, /may call only with a token/);
        return;
      }
      assert.equal(get.status, 200, get.body);
      assert.equal(get.headers['access-control-allow-origin'], PORTAL);
    });

    it('keeps the public, data-free routes open from any Host and Origin', async () => {
      const headers = { host: `rebind.attacker.example:${port}`, origin: 'https://evil.example' };
      for (const path of ['/healthz', '/openapi.json', '/docs', '/', '/page/app.js']) {
        assert.equal((await send(server.url, 'GET', path, headers)).status, 200, path);
      }
      assert.notEqual(
        (await send(server.url, 'GET', '/metrics', headers)).status,
        200,
        '/metrics is not public',
      );
    });

    it('refuses a loopback name with another port, and a body without a Content-Type', async () => {
      if (tokenless) {
        const other = await send(server.url, 'GET', '/v1/plans/active', {
          host: `127.0.0.1:${Number(port) + 1}`,
        });
        assert.equal(other.status, 403);
      }
      const bare = await send(
        server.url,
        'POST',
        '/v1/holds',
        local(),
        JSON.stringify({ plan: 'balanced', for: '1h' }),
      );
      assert.equal(bare.status, 415, bare.body);
    });
  });
}

describe('POWERPLAN_ALLOWED_HOSTS', () => {
  it('lets tokenless callers use a listed name (any port, or the one given), and no other', async () => {
    const t = await testDeps({ POWERPLAN_ALLOWED_HOSTS: 'powerplan.internal, db7.example.com:8080' });
    const server = await startHttpServer({ ...t.deps, config: { ...t.deps.config, port: 0 } });
    try {
      const port = new URL(server.url).port;
      const status = async (host: string) =>
        (await send(server.url, 'GET', '/v1/plans/active', { host })).status;
      assert.equal(await status(`powerplan.internal:${port}`), 200);
      assert.equal(await status('powerplan.internal'), 200);
      assert.equal(await status('db7.example.com:8080'), 200);
      assert.equal(await status(`db7.example.com:${port}`), 403);
      assert.equal(await status(`other.internal:${port}`), 403);
    } finally {
      await server.close();
      await t.cleanup();
    }
  });

  it('rejects a malformed list at start-up, naming the variable', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    for (const bad of ['http://x.example', '*.example.com', 'a.example/path']) {
      assert.throws(() => loadConfig({ POWERPLAN_ALLOWED_HOSTS: bad }), /POWERPLAN_ALLOWED_HOSTS/, bad);
    }
  });
});
