/**
 * No work on a GET: a web page can make a browser send a GET without any script (an `<img src>`
 * carries no Origin, only Sec-Fetch-Site), so no GET may start a benchmark. The attack is the one
 * URL that once did, `GET /v1/recommendation?benchmark=run&force=true`, against a real server in the
 * default mode (no token file): refused, with no benchmark run, stored or locked, whoever sends it;
 * the benchmark starts only through run_cpu_benchmark (POST /v1/benchmarks).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readAdminToken } from '../support/processes.ts';
import { servedInProcess } from '../support/server.ts';

const ATTACK = '/v1/recommendation?benchmark=run&force=true';

describe('no work on GET: benchmark=run on the recommendation', () => {
  const s = servedInProcess();
  let runs = 0;
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${s.server.url}${path}`, { headers });
  const admin = () => ({ authorization: `Bearer ${readAdminToken(s.t.dir)}` });

  /** Counts every benchmark the service starts, whichever route asks. */
  const countRuns = () => {
    const bench = s.t.deps.bench;
    if ((bench as { counted?: true }).counted) return;
    const run = bench.run.bind(bench);
    Object.assign(bench, {
      counted: true,
      run: (...args: Parameters<typeof run>) => {
        runs++;
        return run(...args);
      },
    });
  };

  /** Nothing ran: no call, no stored result, no host lock left. */
  const nothingRan = async () => {
    assert.equal(runs, 0, 'no benchmark was started');
    assert.equal((await s.t.deps.bench.list(5)).total, 0, 'no benchmark record');
    assert.equal(existsSync(join(s.t.dir, 'benchmark.lock')), false, 'no benchmark lock');
  };

  it('as an <img> sends it (no token, no Origin, Sec-Fetch-Site: same-site): refused, nothing runs', async () => {
    countRuns();
    const res = await get(ATTACK, {
      accept: 'image/avif,image/webp,*/*',
      'sec-fetch-site': 'same-site',
      'sec-fetch-mode': 'no-cors',
      'sec-fetch-dest': 'image',
    });
    assert.equal(res.status, 403);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.match(
      ((await res.json()) as { detail: string }).detail,
      /another site's web page.*Sec-Fetch-Site: same-site/,
    );
    await nothingRan();
  });

  it('past the guard (no Sec-Fetch-Site; even with the administrator credential): 400 naming run_cpu_benchmark', async () => {
    countRuns();
    for (const headers of [{}, admin()]) {
      const res = await get(ATTACK, headers);
      assert.equal(res.status, 400);
      assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
      const problem = (await res.json()) as { code: string; detail: string };
      assert.equal(problem.code, 'invalid_input');
      assert.match(problem.detail, /'run' is not offered.*run_cpu_benchmark \(POST \/v1\/benchmarks\)/);
    }
    await nothingRan();
  });

  it('the OpenAPI document offers no benchmark=run and no force on the GET', async () => {
    const doc = (await (await get('/openapi.json')).json()) as {
      paths: Record<string, { get: { parameters: { name: string; schema: { enum?: string[] } }[] } }>;
    };
    const params = doc.paths['/v1/recommendation']!.get.parameters;
    assert.deepEqual(params.find((p) => p.name === 'benchmark')?.schema.enum, ['latest', 'none']);
    assert.equal(
      params.some((p) => p.name === 'force'),
      false,
    );
  });

  it('the benchmark runs through POST /v1/benchmarks, and the recommendation then rests on it', async () => {
    countRuns();
    const posted = await fetch(`${s.server.url}/v1/benchmarks`, {
      method: 'POST',
      headers: { ...admin(), 'content-type': 'application/json' },
      body: JSON.stringify({ profile: 'quick', force: true }),
    });
    assert.equal(posted.status, 201);
    assert.equal(runs, 1);
    const { id } = (await posted.json()) as { id: string };
    const advice = await get('/v1/recommendation');
    assert.equal(advice.status, 200);
    const { basis } = (await advice.json()) as { basis: { benchmarkIds: string[] } };
    assert.deepEqual(basis.benchmarkIds, [id]);
    assert.equal(runs, 1, 'reading the advice ran nothing more');
  });
});
