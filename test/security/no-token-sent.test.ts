/**
 * A request that sends no token is told so, never that its token is not valid: no Authorization
 * header, and `Bearer ` with nothing after it (what `$(cat <unreadable file>)` leaves in a curl
 * line), without and with a token file. A token that is sent and unknown is still "not valid".
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/lib/tokens.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { type ServerProcess, startServer } from '../support/processes.ts';

const put = (url: string, authorization: string | undefined) =>
  fetch(`${url}/v1/plans/active`, {
    method: 'PUT',
    headers: {
      'content-type': 'application/json',
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: JSON.stringify({ plan: 'high-performance', dryRun: true }),
  }).then(async (r) => ({ status: r.status, problem: (await r.json()) as { detail: string; code: string } }));

describe('a request without a token is told that no token was sent', () => {
  let plain: { t: TestDeps; s: ServerProcess };
  let withFile: { t: TestDeps; s: ServerProcess };
  before(async () => {
    const a = await testDeps();
    plain = { t: a, s: await startServer(a.env) };
    const b = await testDeps();
    await createToken(join(b.dir, 'tokens.json'), 'ops', ['control']);
    withFile = { t: b, s: await startServer({ ...b.env, POWERPLAN_TOKEN_FILE: join(b.dir, 'tokens.json') }) };
  });
  after(async () => {
    for (const x of [plain, withFile]) {
      await x?.s.stop();
      await x?.t.cleanup();
    }
  });

  it('no token file: 403 "No token was sent" for no header and for an empty Bearer', async () => {
    for (const header of [undefined, 'Bearer ', 'Bearer']) {
      const r = await put(plain.s.url, header);
      assert.equal(r.status, 403, `${header}: ${JSON.stringify(r.problem)}`);
      assert.match(r.problem.detail, /^set_power_plan needs the 'control' scope.*No token was sent/);
      assert.doesNotMatch(r.problem.detail, /not valid/);
    }
    const wrong = await put(plain.s.url, 'Bearer pp_wrong');
    assert.equal(wrong.status, 401);
    assert.match(wrong.problem.detail, /not valid/);
  });

  it('with a token file: 401 token_missing "No token was sent" for no header and for an empty Bearer', async () => {
    for (const header of [undefined, 'Bearer ']) {
      const r = await put(withFile.s.url, header);
      assert.equal(r.status, 401, JSON.stringify(r.problem));
      assert.equal(r.problem.code, 'unauthorized');
      assert.match(r.problem.detail, /^No token was sent/);
    }
    const wrong = await put(withFile.s.url, 'Bearer pp_wrong');
    assert.match(wrong.problem.detail, /not valid/);
  });
});
