/**
 * GET /metrics scraped and parsed with a real Prometheus text parser (Python's prometheus_client):
 * the plan info, processor ratios, benchmark figures, plan changes from the audit log and HTTP
 * request metrics labelled by route pattern. Then over a real server with a token file: /metrics
 * needs a token like the API, while /docs and /openapi.json stay public.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createApp } from '../../src/surfaces/http/app.ts';
import { call } from '../support/call.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { appOver, servedProcess } from '../support/server.ts';
import { findPrometheusPython, type ParsedFamily, parsePrometheusText, requireTool } from './tools.ts';

const install = 'apt-get install python3-prometheus-client';

const family = (families: ParsedFamily[], name: string): ParsedFamily => {
  const f = families.find((x) => x.name === name);
  assert.ok(f, `metric family ${name} is missing; got ${families.map((x) => x.name).join(', ')}`);
  return f;
};

const sample = (f: ParsedFamily, labels: Record<string, string> = {}, name = f.name) =>
  f.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe('GET /metrics on the simulated backend', () => {
  let python: string | undefined;
  const t = depsPerBlock();
  const app = appOver(t);
  before(async () => {
    python = await findPrometheusPython();
  });

  it('exposes plan, settings, benchmark, changes and request metrics that a Prometheus parser reads', async (ctx) => {
    if (!requireTool(ctx, python !== undefined, "Python's prometheus_client", install)) return;
    const put = (plan: string) =>
      app.request('/v1/plans/active', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ plan }),
      });
    assert.equal((await put('high-performance')).status, 200);
    assert.equal((await put('high-performance')).status, 200); // unchanged: no audit line
    assert.equal((await put('balanced')).status, 200);
    assert.equal((await put('high-performance')).status, 200);
    assert.equal((await app.request('/v1/benchmarks/bm-20250101-120000-abcdef')).status, 404);
    assert.equal((await app.request('/no/such/path/12345')).status, 404);
    const bench = await app.request('/v1/benchmarks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ force: true, threads: 1, idleGapsMs: [50, 200] }),
    });
    assert.equal(bench.status, 201, await bench.clone().text());

    const res = await app.request('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const families = await parsePrometheusText(python!, await res.text());

    const info = family(families, 'powerplan_active_plan_info');
    assert.equal(info.type, 'gauge');
    assert.equal(info.samples.length, 1);
    assert.deepEqual(info.samples[0]!.labels, {
      id: '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c',
      name: 'High performance',
      kind: 'high-performance',
      backend: 'simulated',
      owner: 'simulated',
      edited: 'false',
    });
    assert.equal(info.samples[0]!.value, 1);
    // The switch was read back: every setting in force; the simulated server's OS decides.
    assert.equal(sample(family(families, 'powerplan_plan_settings_not_in_force'))?.value, 0);
    assert.equal(
      sample(family(families, 'powerplan_processor_control_info'), { decided_by: 'os' })?.value,
      1,
    );
    const wake = family(families, 'powerplan_benchmark_wakeup_seconds');
    assert.ok(sample(wake, { gap_seconds: '0.001', percentile: '99' }), 'p99 wake-up cost at the 1 ms gap');
    assert.equal(sample(family(families, 'powerplan_backend_up'))?.value, 1);

    // High performance keeps the processor at 100% on AC and DC: ratios, not percent.
    const min = family(families, 'powerplan_processor_min_state_ratio');
    assert.equal(sample(min, { power: 'ac' })?.value, 1);
    assert.equal(sample(min, { power: 'dc' })?.value, 1);
    assert.equal(sample(family(families, 'powerplan_processor_max_state_ratio'), { power: 'ac' })?.value, 1);
    for (const s of family(families, 'powerplan_processor_epp_ratio').samples) {
      assert.ok(s.value >= 0 && s.value <= 1, `epp ratio ${s.value} out of 0..1`);
    }
    assert.equal(sample(family(families, 'powerplan_policy_managed'))?.value, 0);

    // Three real switches; the repeated request changed nothing and wrote no audit line.
    const changes = family(families, 'powerplan_plan_changes');
    assert.equal(changes.type, 'counter');
    assert.equal(sample(changes, {}, 'powerplan_plan_changes_total')?.value, 3);

    const penalty = family(families, 'powerplan_benchmark_burst_penalty_ratio');
    assert.deepEqual(penalty.samples.map((s) => s.labels.gap_seconds).sort(), ['0.05', '0.2']);
    const throughput = family(families, 'powerplan_benchmark_throughput_operations_per_second');
    for (const phase of ['single_thread', 'all_core']) {
      const v = sample(throughput, { phase })?.value;
      assert.ok(v !== undefined && v > 0, `throughput ${phase} = ${v}`);
    }
    const lastRun = sample(family(families, 'powerplan_benchmark_last_run_timestamp_seconds'));
    assert.ok(lastRun && Math.abs(lastRun.value - Date.now() / 1000) < 3600, 'last run is recent');

    const requests = family(families, 'powerplan_http_requests');
    assert.equal(requests.type, 'counter');
    const count = (labels: Record<string, string>) =>
      sample(requests, labels, 'powerplan_http_requests_total')?.value;
    assert.equal(count({ method: 'PUT', route: '/v1/plans/active', status: '200' }), 4);
    assert.equal(count({ method: 'POST', route: '/v1/benchmarks', status: '201' }), 1);
    // Route patterns, never raw paths: an unknown id and an unknown path add no series of their own.
    assert.equal(count({ method: 'GET', route: '/v1/benchmarks/:id', status: '404' }), 1);
    assert.equal(count({ method: 'GET', route: 'unmatched', status: '404' }), 1);
    for (const s of requests.samples) {
      assert.ok(!s.labels.route?.includes('bm-2025'), `raw path in a route label: ${s.labels.route}`);
      assert.ok(!s.labels.route?.includes('12345'), `raw path in a route label: ${s.labels.route}`);
    }
    const histogram = family(families, 'powerplan_http_request_duration_seconds');
    assert.equal(histogram.type, 'histogram');
    assert.equal(
      sample(
        histogram,
        { method: 'PUT', route: '/v1/plans/active' },
        'powerplan_http_request_duration_seconds_count',
      )?.value,
      4,
    );

    // Default process metrics, on the app's own registry.
    assert.ok(families.some((f) => f.name === 'process_cpu_seconds'));
    assert.ok(families.some((f) => f.name === 'nodejs_eventloop_lag_seconds'));
  });

  it('exposes what the fleet status needs: the advice, whether the plan can be set, the desired status', async () => {
    await call(t.deps, 'set_desired_power_plan', { plan: 'power-saver' });
    try {
      const text = await (await app.request('/metrics')).text();
      assert.match(text, /^powerplan_plan_settable 1$/m);
      // The simulated machine on High performance: the database advice keeps it.
      assert.match(text, /^powerplan_plan_change_recommended 0$/m);
      assert.match(
        text,
        /^powerplan_recommended_plan_info\{id="[^"]+",name="High performance",kind="high-performance"\} 1$/m,
      );
      assert.match(text, /^powerplan_desired_plan_status\{status="drift"\} 1$/m);
      assert.match(text, /^powerplan_desired_plan_status\{status="in-desired-state"\} 0$/m);
    } finally {
      await call(t.deps, 'set_desired_power_plan', { plan: null });
    }
  });

  it('keeps its own registry: a second app starts from zero', async () => {
    const other = createApp(t.deps);
    const text = await (await other.request('/metrics')).text();
    assert.doesNotMatch(text, /powerplan_http_requests_total\{method="PUT"/);
  });
});

describe('GET /metrics behind tokens', () => {
  const served = servedProcess({ tokens: { prometheus: ['read'] } });

  it('answers 401 without a token and the metrics with a read token', async () => {
    const anonymous = await fetch(`${served.server.url}/metrics`);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('content-type') ?? '', /application\/problem\+json/);
    const authorized = await fetch(`${served.server.url}/metrics`, {
      headers: { authorization: `Bearer ${served.tokens.prometheus}` },
    });
    assert.equal(authorized.status, 200);
    const text = await authorized.text();
    assert.match(text, /^powerplan_active_plan_info\{.*kind="balanced".*\} 1$/m);
    // The refused request was counted too, under its route.
    assert.match(text, /^powerplan_http_requests_total\{method="GET",route="\/metrics",status="401"\} 1$/m);
  });

  it('leaves /docs, its assets and /openapi.json public', async () => {
    for (const path of [
      '/docs',
      '/docs/assets/init.js',
      '/docs/assets/swagger-ui-dist/swagger-ui.css',
      '/openapi.json',
    ]) {
      const res = await fetch(`${served.server.url}${path}`);
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
    }
    assert.equal((await fetch(`${served.server.url}/v1/plans/active`)).status, 401);
  });
});
