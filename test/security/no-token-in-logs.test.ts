/**
 * Nothing token-shaped in any log line: a `powerplan serve` at the debug level is sent the
 * administrator credential, a control token of its token file and made-up tokens in every place a
 * caller controls (the path, the query, headers that are logged when refused, bodies of REST and
 * MCP requests, malformed Authorization values), and its whole log is searched for each of them.
 * The finding: `"path":"/v1/pp_3crE..."` in `request refused`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServing } from '../../scripts/lib/serve.mjs';
import { redactSecrets } from '../../src/lib/log.ts';
import { createToken } from '../../src/lib/tokens.ts';
import { childBaseEnv } from '../support/commands.ts';
import { binPath, readAdminToken } from '../support/processes.ts';

/** Sends a raw request (any Host, any path bytes) and reads the answer whole. */
const send = (url: string, path: string, headers: Record<string, string>, method = 'GET', body?: string) =>
  new Promise<number>((resolve, reject) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    // A server refusing a body too large may answer and close before the whole body is written:
    // the write then fails (EPIPE, ECONNRESET), and the refusal's log line is what is checked.
    req.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'EPIPE' || e.code === 'ECONNRESET' ? resolve(0) : reject(e),
    );
    req.end(body);
  });

describe('no token in the log', () => {
  let dir: string;
  let served: { url: string; output: () => string; stop: () => Promise<unknown> };
  let admin: string;
  let control: string;
  const madeUp = `pp_${'Zq9-'.repeat(10)}abc`;
  const foreign = 'c2VjcmV0LWJlYXJlci1vZi1hbm90aGVyLXN5c3RlbQ';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-logs-'));
    const tokenFile = join(dir, 'tokens.json');
    control = (await createToken(tokenFile, 'ops', ['control'])).token;
    served = (await startServing(process.execPath, [binPath, 'serve'], {
      env: {
        ...childBaseEnv(),
        POWERPLAN_PORT: '0',
        POWERPLAN_STATE_DIR: join(dir, 'state'),
        POWERPLAN_BACKEND: 'simulated',
        POWERPLAN_TOKEN_FILE: tokenFile,
        POWERPLAN_LOG_LEVEL: 'debug',
      },
      timeoutMs: 20_000,
    })) as typeof served;
    admin = readAdminToken(join(dir, 'state'));
  });
  after(async () => {
    await served.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('attack, tokens everywhere: path, query, headers, REST and MCP bodies; none of them in the log', async () => {
    const all = [admin, control, madeUp];
    const encoded = (t: string) => t.replace('_', '%5F');
    let statuses = 0;
    for (const t of all) {
      const bearer = { authorization: `Bearer ${t}` };
      statuses += await send(served.url, `/v1/${t}`, {});
      statuses += await send(served.url, `/v1/plans/${encoded(t)}?token=${t}&access_token=${encoded(t)}`, {});
      statuses += await send(served.url, `/v1/${t}/x?${t}`, bearer);
      // Refused for the Host and the Origin, which are logged then.
      statuses += await send(served.url, `/v1/plans?t=${t}`, { host: `${t.toLowerCase()}.example.com` });
      statuses += await send(served.url, '/v1/plans', { origin: `https://example.com/?${t}` });
      // Malformed Authorization values: the wrong scheme, no scheme, a token with junk after it.
      statuses += await send(served.url, '/v1/whoami', { authorization: t });
      statuses += await send(served.url, '/v1/whoami', { authorization: `Token ${t}` });
      statuses += await send(served.url, '/v1/whoami', { authorization: `Bearer ${t}x` });
      statuses += await send(served.url, '/v1/whoami', {
        authorization: `Basic ${Buffer.from(`u:${t}`).toString('base64')}`,
      });
      statuses += await send(served.url, '/v1/whoami', { cookie: `token=${t}`, 'x-api-key': t });
      // Bodies: an unknown plan, invalid JSON, a wrong content type, a body too large, MCP arguments.
      const json = { ...bearer, 'content-type': 'application/json' };
      statuses += await send(served.url, '/v1/plans/active', json, 'PUT', JSON.stringify({ plan: t }));
      statuses += await send(served.url, '/v1/plans/active', json, 'PUT', `{"plan": "${t}`);
      statuses += await send(
        served.url,
        '/v1/plans/active',
        { ...bearer, 'content-type': 'text/plain' },
        'PUT',
        t,
      );
      statuses += await send(
        served.url,
        '/v1/plans/active',
        json,
        'PUT',
        JSON.stringify({ plan: t.repeat(50_000) }),
      );
      statuses += await send(
        served.url,
        '/mcp',
        { ...json, accept: 'application/json, text/event-stream' },
        'POST',
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'set_power_plan', arguments: { plan: t } },
        }),
      );
    }
    statuses += await send(served.url, '/v1/whoami', { authorization: `Bearer ${foreign}` });
    assert.ok(statuses > 0);
    const log = served.output();
    // The log has the lines these requests make, so the search below searches something.
    assert.match(log, /"msg":"request refused".*"reason":"token_malformed"/);
    assert.match(log, /"msg":"request refused".*"reason":"body_too_large"/);
    assert.match(log, /\/v1\/pp_\[redacted\]/);
    for (const t of [...all, foreign]) {
      const body = t.slice(3, 23);
      assert.ok(
        !log.includes(body),
        `a token's characters (${t.slice(0, 6)}...) are in the log:\n${log.split('\n').find((l) => l.includes(body))}`,
      );
    }
  });

  it('the redaction itself: whole and partial tokens, percent-encoded, after Bearer and Basic; plain words stay', () => {
    assert.equal(redactSecrets('/v1/pp_3crEabcdef/x'), '/v1/pp_[redacted]/x');
    assert.equal(redactSecrets('?t=pp%5Fabcdefgh&x=1'), '?t=pp_[redacted]&x=1');
    assert.equal(redactSecrets('"Bearer abc.def"'), '"Bearer [redacted]"');
    assert.equal(redactSecrets('basic%20dTpw'), 'basic [redacted]');
    assert.equal(redactSecrets('app_settings pp_ ppx_abcdef'), 'app_settings pp_ ppx_abcdef');
  });
});
