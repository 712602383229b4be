/**
 * The smaller holes of the front door: a keep-alive client survives a 413, the token file is
 * reloaded safely (a revoked token is refused as soon as the new file is read; a failed read keeps
 * the tokens in force and is retried), and refused requests are all counted but rarely logged.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/log.ts';
import { createToken, revokeToken, TokenVerifier } from '../../src/lib/tokens.ts';
import { createApp, MAX_BODY_BYTES } from '../../src/surfaces/http/app.ts';
import { REFUSAL_LOG_LINES_PER_MINUTE } from '../../src/surfaces/http/refusals.ts';
import { testDeps } from '../support/deps.ts';
import { servedInProcess } from '../support/server.ts';

describe('a keep-alive client and an oversized body', () => {
  const served = servedInProcess();

  for (const size of [MAX_BODY_BYTES + 1024, 4 * 1024 * 1024]) {
    it(`answers the 413 (body of ${size} bytes) and the next two requests on the same agent`, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const sockets = new Set<unknown>();
      const call = (method: string, path: string, body?: string) =>
        new Promise<{ status: number; connection: string | undefined; text: string }>((resolve, reject) => {
          const req = httpRequest(
            `${served.server.url}${path}`,
            {
              method,
              agent,
              headers:
                body === undefined
                  ? {}
                  : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
            },
            (res) => {
              sockets.add(res.socket);
              let text = '';
              res.on('data', (d) => {
                text += d;
              });
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text }),
              );
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      try {
        const big = await call('PUT', '/v1/plans/active', JSON.stringify({ plan: 'x'.repeat(size) }));
        assert.equal(big.status, 413);
        assert.equal(big.connection, 'close', 'the 413 says the connection ends');
        assert.match(big.text, /payload_too_large/);
        for (const path of ['/healthz', '/v1/plans/active']) {
          const next = await call('GET', path);
          assert.equal(next.status, 200, `${path}: ${next.text}`);
        }
        assert.equal(sockets.size, 2, 'one new connection after the 413, then kept alive');
      } finally {
        agent.destroy();
      }
    });
  }
});

describe('token file reload', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-reload-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('refuses a revoked token from the moment the new file is read, also to requests during the reload', async () => {
    const file = join(dir, 'revoke.json');
    const { token } = await createToken(file, 'ops', ['read']);
    const { token: other } = await createToken(file, 'other', ['read']);
    const verifier = new TokenVerifier(file);
    assert.equal((await verifier.verify(token)).ok, true);
    await revokeToken(file, 'ops');
    // Several requests at once: the first starts the reload, the others must wait for its result.
    const verdicts = await Promise.all([1, 2, 3, 4].map(() => verifier.verify(token)));
    assert.deepEqual(
      verdicts.map((v) => v.ok),
      [false, false, false, false],
    );
    assert.equal((await verifier.verify(other)).ok, true, 'the remaining token still works');
  });

  it('keeps the tokens in force when a read fails, says so once, and reads again on the next request', async () => {
    const file = join(dir, 'flaky.json');
    const { token } = await createToken(file, 'ops', ['read']);
    const problems: [string, boolean][] = [];
    const verifier = new TokenVerifier(file, (m, kept) => problems.push([m, kept]));
    assert.equal((await verifier.verify(token)).ok, true);
    // The file becomes unreadable (a directory in its place: EISDIR, as EMFILE or EACCES would be).
    await rename(file, `${file}.saved`);
    await mkdir(file);
    for (let i = 0; i < 3; i++)
      assert.equal((await verifier.verify(token)).ok, true, `request ${i} during the failure`);
    assert.equal(verifier.problem, undefined, 'not reported as an invalid file');
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.match(problems[0]![0], /EISDIR/);
    assert.equal(problems[0]![1], true, 'reported with the tokens kept');
    // Readable again, now without the token: the next request reads it and refuses the token.
    await rm(file, { recursive: true });
    await rename(`${file}.saved`, file);
    await revokeToken(file, 'ops');
    assert.equal((await verifier.verify(token)).ok, false);
  });

  it('fails closed when the very first read fails', async () => {
    const file = join(dir, 'never.json');
    await mkdir(file);
    const verifier = new TokenVerifier(file);
    await verifier.refresh();
    assert.match(verifier.problem ?? '', /cannot read/);
    assert.equal(verifier.size, 0);
  });
});

describe('refused requests: all counted, few logged', () => {
  it(`logs at most ${REFUSAL_LOG_LINES_PER_MINUTE} lines a minute per reason and counts every refusal`, async () => {
    const lines: string[] = [];
    const t = await testDeps({}, { log: createLogger('debug', (l) => lines.push(l)) });
    try {
      const app = createApp(t.deps);
      for (let i = 0; i < 50; i++) {
        const res = await app.request('/v1/audit', { headers: { host: 'rebind.attacker.example' } });
        assert.equal(res.status, 403);
      }
      for (let i = 0; i < 10; i++) {
        const res = await app.request('/v1/holds', {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: '{"plan":"power-saver","for":"7d"}',
        });
        assert.equal(res.status, 415);
      }
      const refused = lines.filter((l) => l.includes('request refused'));
      assert.equal(refused.filter((l) => l.includes('"host"')).length, REFUSAL_LOG_LINES_PER_MINUTE);
      assert.equal(refused.filter((l) => l.includes('"content_type"')).length, REFUSAL_LOG_LINES_PER_MINUTE);
      const metrics = await (await app.request('/metrics')).text();
      assert.match(metrics, /powerplan_http_refused_total\{reason="host"\} 50/);
      assert.match(metrics, /powerplan_http_refused_total\{reason="content_type"\} 10/);
      assert.equal((await (await app.request('/v1/holds')).json()).holds.length, 0, 'no hold was created');
    } finally {
      await t.cleanup();
    }
  });
});
