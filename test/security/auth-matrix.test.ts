import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { grants, type Scope, scopes } from '../../src/domain/scopes.ts';
import { operations } from '../../src/operations/index.ts';
import { writeSecret } from '../fleet/rig.ts';
import {
  bearer,
  restRequest,
  type SecureHarness,
  secureHarness,
  strangerToken,
  stubHandlers,
  validSample,
} from './harness.ts';

// Handlers never run here: each answers `busy`, which proves the request got past auth and validation.
stubHandlers(operations);

type Credential = 'none' | 'bad' | Scope;
const credentials: Credential[] = ['none', 'bad', ...scopes];

let h: SecureHarness;
const tokenFor = (c: Credential) => (c === 'none' ? undefined : c === 'bad' ? strangerToken : h.tokens[c]);

interface Problem {
  code: string;
  detail: string;
  details?: { requiredScope?: string };
}

describe('auth matrix: every operation x {no token, bad token, read, benchmark, control}', () => {
  before(async () => {
    h = await secureHarness();
  });
  after(() => h.cleanup());

  it('the registry has operations of every scope', () => {
    for (const s of scopes) assert.ok(operations.some((op) => op.scope === s) || s === 'benchmark', s);
  });

  for (const op of operations) {
    it(`REST ${op.http.method} ${op.http.path} (${op.name}, needs ${op.scope})`, async () => {
      const input = validSample(op);
      for (const cred of credentials) {
        const res = await h.app.request(...restRequest(op, input, bearer(tokenFor(cred))));
        const body = (await res.json()) as Problem;
        const label = `${op.name} with ${cred}: ${res.status} ${body.detail}`;
        if (cred === 'none' || cred === 'bad') {
          assert.equal(res.status, 401, label);
          assert.equal(body.code, 'unauthorized', label);
          assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="powerplan"/, label);
          if (cred === 'bad') assert.match(res.headers.get('www-authenticate') ?? '', /invalid_token/);
        } else if (grants([cred], op.scope)) {
          assert.equal(res.status, 409, label);
          assert.equal(body.code, 'busy', label);
          assert.match(body.detail, /^stub: /, label);
        } else {
          assert.equal(res.status, 403, label);
          assert.equal(body.code, 'forbidden', label);
          assert.equal(body.details?.requiredScope, op.scope, label);
          assert.ok(body.detail.includes(`'${op.scope}'`), label);
        }
      }
    });

    it(`REST ${op.name}: an unknown field is rejected before anything runs (strict input)`, async () => {
      const res = await h.app.request(
        ...restRequest(op, { ...validSample(op), unexpectedField: 1 }, bearer(h.tokens.control)),
      );
      const body = (await res.json()) as Problem;
      assert.equal(res.status, 400, `${op.name}: ${body.detail}`);
      assert.match(body.detail, /unexpectedField/);
    });
  }

  it('public routes answer without a token; everything else needs one', async () => {
    for (const path of ['/healthz', '/openapi.json', '/']) {
      assert.equal((await h.app.request(path)).status, 200, path);
    }
    for (const path of [
      '/metrics',
      '/v1/nothing-here',
      '/healthz/../v1/plans',
      '/openapi.json/x',
      '/page/../v1/plans',
    ]) {
      assert.equal((await h.app.request(path)).status, 401, path);
    }
    // Only GET/HEAD are public.
    assert.equal((await h.app.request('/healthz', { method: 'POST' })).status, 401);
  });

  it('malformed Authorization headers are 401, never 5xx', async () => {
    for (const value of [
      'Bearer',
      'Bearer ',
      `bearer  ${h.tokens.read}x`,
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      `Bearer ${h.tokens.read} ${h.tokens.read}`,
      `Bearer ${'x'.repeat(8000)}`,
      'Bearer pp_é',
      `Bearer ${h.tokens.read.slice(0, -1)}`,
    ]) {
      const res = await h.app.request('/v1/plans', { headers: { authorization: value } });
      assert.equal(res.status, 401, value.slice(0, 40));
    }
    // The scheme is case-insensitive (RFC 7235).
    const ok = await h.app.request('/v1/plans', { headers: { authorization: `bearer ${h.tokens.read}` } });
    assert.equal(ok.status, 409, 'reached the (stubbed) handler');
  });
});

/** The JSON-RPC response of one MCP request, whether it came as JSON or as an SSE stream. */
const rpcResult = async (res: Response): Promise<{ result?: Record<string, unknown>; error?: unknown }> => {
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim());
    return JSON.parse(data.at(-1) ?? '{}');
  }
  return JSON.parse(text);
};

describe('auth matrix over MCP Streamable HTTP at /mcp', () => {
  let fleetDir: string;
  before(async () => {
    // With a fleet configured, so that the fleet tools are listed and checked too.
    fleetDir = await mkdtemp(join(tmpdir(), 'powerplan-auth-fleet-'));
    const fleetFile = join(fleetDir, 'fleet.json');
    await writeSecret(fleetFile, JSON.stringify({ hosts: [{ name: 'db1', url: 'http://127.0.0.1:9' }] }));
    h = await secureHarness({ POWERPLAN_FLEET_FILE: fleetFile });
  });
  after(async () => {
    await h.cleanup();
    await rm(fleetDir, { recursive: true, force: true });
  });

  const call = (name: string, args: unknown, token: string | undefined) =>
    h.app.request('http://localhost/mcp', {
      method: 'POST',
      headers: {
        host: 'localhost',
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        ...bearer(token),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    });

  for (const op of operations) {
    it(`tools/call ${op.name} (needs ${op.scope})`, async () => {
      const input = validSample(op);
      for (const cred of credentials) {
        const res = await call(op.name, input, tokenFor(cred));
        if (cred === 'none' || cred === 'bad') {
          assert.equal(res.status, 401, `${op.name} with ${cred}`);
          assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
          continue;
        }
        assert.equal(res.status, 200, `${op.name} with ${cred}`);
        const { result } = await rpcResult(res);
        const problem = (result?._meta as { problem?: Problem } | undefined)?.problem;
        const label = `${op.name} with ${cred}: ${JSON.stringify(result)}`;
        assert.equal(result?.isError, true, label);
        if (grants([cred], op.scope)) {
          assert.equal(problem?.code, 'busy', label);
        } else {
          assert.equal(problem?.code, 'forbidden', label);
          assert.ok(problem?.detail.includes(`'${op.scope}'`), label);
        }
      }
    });
  }
});
