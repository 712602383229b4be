/**
 * Security headers over a real socket, as the Node adapter writes them: every kind of response (a
 * JSON read made with its headers, a refusal, a 404, the OpenAPI document, the page, an MCP
 * answer) carries each header of the set exactly once; the page's own fuller
 * Content-Security-Policy wins over the set's.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import { createApp } from '../../src/surfaces/http/app.ts';
import { securityHeaderList } from '../../src/surfaces/http/headers.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';

interface Answer {
  status: number;
  /** Each header name (lower case) with every value sent for it. */
  headers: Map<string, string[]>;
}

const fetchRaw = (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const headers = new Map<string, string[]>();
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        const name = res.rawHeaders[i]!.toLowerCase();
        headers.set(name, [...(headers.get(name) ?? []), res.rawHeaders[i + 1]!]);
      }
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers }));
    });
    req.on('error', reject);
    req.end(init.body);
  });

describe('security headers over HTTP', () => {
  let t: TestDeps;
  let server: ReturnType<typeof serve>;
  let base: string;
  const expected = securityHeaderList({ frameAncestors: ["'self'"], https: false });

  before(async () => {
    t = await testDeps();
    const app = createApp(t.deps);
    server = await new Promise((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await t.cleanup();
  });

  const cases: [string, string, Parameters<typeof fetchRaw>[1], number][] = [
    ['liveness (a JSON answer made with its headers)', '/healthz', {}, 200],
    ['a read', '/v1/plans/active', {}, 200],
    ['the plan list', '/v1/plans', {}, 200],
    ['an unknown route (problem+json)', '/v1/nope', {}, 404],
    [
      'a write without a token (refused)',
      '/v1/plans/active',
      { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"plan":"balanced"}' },
      403,
    ],
    ['a foreign Host (refused by the guard)', '/v1/plans', { headers: { host: 'evil.example.com' } }, 403],
    [
      'an MCP answer',
      '/mcp',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 't', version: '1' },
          },
        }),
      },
      200,
    ],
    ['the OpenAPI document', '/openapi.json', {}, 200],
  ];
  for (const [what, path, init, status] of cases) {
    it(`${what}: every header of the set, once`, async () => {
      const a = await fetchRaw(base + path, init);
      assert.equal(a.status, status, `${path} answered ${a.status}`);
      for (const [name, value] of expected)
        assert.deepEqual(a.headers.get(name), [value], `${name} on ${path}`);
      assert.equal(a.headers.get('content-type')?.length, 1, 'one Content-Type');
    });
  }

  it('the page: its own Content-Security-Policy, once, and the rest of the set', async () => {
    const a = await fetchRaw(`${base}/`);
    assert.equal(a.status, 200);
    const csp = a.headers.get('content-security-policy') ?? [];
    assert.equal(csp.length, 1);
    assert.match(csp[0]!, /script-src 'self'/);
    for (const [name, value] of expected)
      if (name !== 'content-security-policy') assert.deepEqual(a.headers.get(name), [value], name);
  });
});
