/**
 * GET /metrics of a real `powerplan serve`, after plan changes, a benchmark, a hold and refused
 * requests and a desired plan (so that every family has samples), passes Prometheus' own linter, `promtool check
 * metrics`, with exit code 0 and nothing to say: what a CI gate on the exposition runs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { servedProcess } from '../support/server.ts';
import { requireTool, run } from './tools.ts';

describe('/metrics under promtool check metrics', () => {
  const s = servedProcess();

  it('exits 0 with no finding', async (ctx) => {
    const version = await run('promtool', ['--version'], { timeoutMs: 20_000 });
    if (!requireTool(ctx, version.code === 0, 'promtool', 'apt-get install prometheus')) return;
    const call = (path: string, method = 'GET', body?: unknown) =>
      fetch(`${s.server.url}${path}`, {
        method,
        // Changes need the local administrator credential; reads do not.
        ...(body === undefined
          ? { headers: s.server.asAdmin }
          : {
              headers: { ...s.server.asAdmin, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            }),
      }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      });
    assert.equal(await call('/v1/plans/active', 'PUT', { plan: 'high-performance' }), 200);
    assert.equal(await call('/v1/plans/active', 'PUT', { plan: 'balanced' }), 200);
    assert.equal(
      await call('/v1/benchmarks', 'POST', { force: true, threads: 1, idleGapsMs: [50, 200] }),
      201,
    );
    assert.equal(await call('/v1/desired', 'PUT', { plan: 'power-saver' }), 200);
    assert.equal(await call('/v1/holds', 'POST', { plan: 'high-performance', for: '10m' }), 201);
    assert.equal(await call('/v1/plans/active', 'PUT', { plan: 'nope' }), 404);
    assert.equal(await call('/no/such/path'), 404);

    const res = await fetch(`${s.server.url}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    for (const family of [
      'powerplan_active_plan_info',
      'powerplan_plan_changes_total',
      'powerplan_benchmark_burst_penalty_ratio',
      'powerplan_plan_settable',
      'powerplan_plan_change_recommended',
      'powerplan_recommended_plan_info',
      'powerplan_desired_plan_status',
      'powerplan_processor_control_info',
      'powerplan_http_request_duration_seconds_bucket',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ])
      assert.match(text, new RegExp(`^${family}[{ ]`, 'm'), `${family} has samples`);

    const lint = await run('promtool', ['check', 'metrics'], { input: text, timeoutMs: 30_000 });
    assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'promtool found nothing');
    assert.equal(lint.code, 0);
  });
});
