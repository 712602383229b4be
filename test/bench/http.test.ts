import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { liveWorkers } from '../../src/bench/runner.ts';
import { BenchmarkList, BenchmarkResult } from '../../src/domain/benchmark.ts';
import { readAdminToken } from '../support/processes.ts';
import { servedInProcess } from '../support/server.ts';
import { until } from '../support/until.ts';

/** Short ladder and forced: other work on a shared test machine must not make the guard refuse. */
const body = JSON.stringify({ force: true, idleGapsMs: [20, 100] });
/** POST /v1/benchmarks as the host's administrator (the credential the server left in `stateDir`). */
const post = (base: string, stateDir: string, signal?: AbortSignal) =>
  fetch(`${base}/v1/benchmarks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${readAdminToken(stateDir)}` },
    body,
    ...(signal ? { signal } : {}),
  });

describe('benchmarks over HTTP (real server on loopback)', () => {
  const served = servedInProcess();
  const base = () => served.server.url;
  let id: string;

  it('runs a benchmark (201), refuses a concurrent one (409 problem+json), and answers /healthz while its workers run', async () => {
    const running = post(base(), served.t.dir);
    await until(
      'a benchmark worker running',
      () => served.t.deps.bench.running && liveWorkers() > 0,
      15_000,
      5,
    );

    const second = await post(base(), served.t.dir);
    assert.equal(second.status, 409);
    assert.match(second.headers.get('content-type') ?? '', /application\/problem\+json/);
    const problem = (await second.json()) as { status: number; code?: string; detail?: string };
    assert.equal(problem.status, 409);
    assert.match(JSON.stringify(problem), /busy/);

    // The work runs in worker threads, so the event loop stays free: health checks are answered
    // while workers are busy. A benchmark on the main thread would leave no worker alive during
    // any answer (and block every check for a whole phase).
    let checks = 0;
    let duringWork = 0;
    while (served.t.deps.bench.running && duringWork < 20) {
      const workingBefore = liveWorkers() > 0;
      const h = await fetch(`${base()}/healthz`);
      assert.equal(h.status, 200);
      await h.arrayBuffer();
      checks++;
      if (workingBefore && liveWorkers() > 0) duringWork++;
    }
    assert.ok(duringWork >= 3, `${duringWork} of ${checks} health checks answered while workers ran`);

    const res = await running;
    assert.equal(res.status, 201);
    const result = BenchmarkResult.parse(await res.json());
    assert.equal(result.environment.backend, 'simulated');
    assert.ok(result.environment.activePlan?.plan, 'the active plan is recorded');
    assert.ok(result.phases.sustainedSingle.throughput.value > 0);
    id = result.id;
  });

  it('lists and fetches stored results; 404 for an unknown id, 400 for a malformed one', async () => {
    const list = BenchmarkList.parse(await (await fetch(`${base()}/v1/benchmarks?limit=5`)).json());
    assert.equal(list.benchmarks[0]?.id, id);

    const one = await fetch(`${base()}/v1/benchmarks/${id}`);
    assert.equal(one.status, 200);
    assert.equal(BenchmarkResult.parse(await one.json()).id, id);

    const unknown = await fetch(`${base()}/v1/benchmarks/bm-20000101-000000-000000`);
    assert.equal(unknown.status, 404);
    assert.match(unknown.headers.get('content-type') ?? '', /application\/problem\+json/);
    await unknown.arrayBuffer();

    const malformed = await fetch(`${base()}/v1/benchmarks/not-an-id`);
    assert.equal(malformed.status, 400);
    await malformed.arrayBuffer();
  });

  it('stops every worker when the HTTP client goes away', async () => {
    const client = new AbortController();
    const running = post(base(), served.t.dir, client.signal).catch((e: unknown) => e);
    await until(
      'a benchmark worker running',
      () => served.t.deps.bench.running && liveWorkers() > 0,
      15_000,
      5,
    );
    client.abort();
    assert.ok((await running) instanceof Error);
    await until('the benchmark stopped', () => !served.t.deps.bench.running, 15_000, 5);
    assert.equal(liveWorkers(), 0);
    const list = BenchmarkList.parse(await (await fetch(`${base()}/v1/benchmarks`)).json());
    assert.equal(list.total, 1, 'the cancelled run is not stored');
  });
});
