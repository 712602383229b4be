/** get_recommendation as an operation: which benchmark it rests on, that it never runs one, REST and CLI. */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { BenchmarkService } from '../../src/bench/service.ts';
import { Recommendation } from '../../src/domain/advice.ts';
import type { BenchmarkResult } from '../../src/domain/benchmark.ts';
import type { PowerPlanError } from '../../src/domain/errors.ts';
import { SetPlanResult } from '../../src/domain/schemas.ts';
import { localCaller } from '../../src/domain/scopes.ts';
import { operationByName } from '../../src/operations/index.ts';
import { runOperation } from '../../src/operations/run.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { contextOf } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { runCli } from '../support/processes.ts';
import { benchmarkResult } from './scenarios.ts';

const op = operationByName('get_recommendation')!;

/** A benchmark history stand-in holding the given results (newest first); `run` answers `fresh`. */
const fakeBench = (stored: BenchmarkResult[], fresh?: BenchmarkResult) => {
  const calls = { run: 0 };
  const bench = {
    list: async () => ({ total: stored.length, benchmarks: stored.map((r) => r.summary) }),
    get: async (id: string) => stored.find((r) => r.id === id)!,
    run: async () => {
      calls.run++;
      return fresh!;
    },
  } as unknown as BenchmarkService;
  return { bench, calls };
};

let t: TestDeps | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const ctx = (scopes: ('read' | 'benchmark' | 'control')[] = ['control']) =>
  contextOf(t!.deps, { caller: { ...localCaller, name: 'tester', scopes } });

describe('get_recommendation', () => {
  it('without a stored benchmark: rules only, and says so', async () => {
    t = await testDeps({}, { bench: fakeBench([]).bench });
    const r = Recommendation.parse(await runOperation(op, {}, ctx()));
    assert.equal(r.workload, 'database');
    assert.equal(r.basis.kind, 'rules');
    assert.match(r.basis.text, /no benchmark is stored/);
    assert.equal(r.recommended?.id, SCHEME.highPerformance);
  });

  it('uses a recent benchmark that ran under the active plan', async () => {
    const boot = await testDeps();
    const active = await boot.deps.backend.getActive();
    await boot.cleanup();
    const underActive = benchmarkResult(34, { id: 'bm-20250101-120000-0000aa', activePlan: active });
    t = await testDeps({}, { bench: fakeBench([underActive]).bench });
    const r = Recommendation.parse(await runOperation(op, { benchmark: 'latest' }, ctx(['read'])));
    assert.equal(r.basis.kind, 'benchmark');
    assert.deepEqual(r.basis.benchmarkIds, ['bm-20250101-120000-0000aa']);
    assert.equal(r.confidence, 'high');
    assert.ok(r.expectedGain?.length);
  });

  it('ignores a benchmark that ran under another plan, and says which', async () => {
    const other = benchmarkResult(34, { id: 'bm-20250101-120000-0000bb', activePlan: null });
    t = await testDeps({}, { bench: fakeBench([other]).bench });
    const r = Recommendation.parse(await runOperation(op, {}, ctx()));
    assert.equal(r.basis.kind, 'rules');
    assert.match(r.basis.text, /bm-20250101-120000-0000bb/);
  });

  it('benchmark=none: rules only even with a benchmark at hand', async () => {
    t = await testDeps({}, { bench: fakeBench([benchmarkResult(34)]).bench });
    const r = Recommendation.parse(await runOperation(op, { benchmark: 'none' }, ctx()));
    assert.equal(r.basis.kind, 'rules');
  });

  it('never runs a benchmark: benchmark=run is invalid input naming run_cpu_benchmark, for any caller', async () => {
    const { bench, calls } = fakeBench([], benchmarkResult(40, { id: 'bm-20250101-120000-0000cc' }));
    t = await testDeps({}, { bench });
    for (const scopes of [['read'], ['benchmark'], ['control']] as const) {
      await assert.rejects(
        runOperation(op, { benchmark: 'run', force: true }, ctx([...scopes])),
        (e: PowerPlanError) =>
          e.code === 'invalid_input' &&
          /'run' is not offered.*run_cpu_benchmark \(POST \/v1\/benchmarks\)/.test(e.message),
      );
    }
    for (const benchmark of ['latest', 'none'] as const) await runOperation(op, { benchmark }, ctx());
    assert.equal(calls.run, 0);
  });

  it('REST: GET /v1/recommendation?workload=energy-saving', async () => {
    t = await testDeps({}, { bench: fakeBench([]).bench });
    const res = await createApp(t.deps).request('/v1/recommendation?workload=energy-saving&benchmark=none');
    assert.equal(res.status, 200);
    const r = Recommendation.parse(await res.json());
    assert.equal(r.workload, 'energy-saving');
    assert.equal(r.changeRecommended, false, 'Balanced is already right for saving energy');
    const bad = await createApp(t.deps).request('/v1/recommendation?workload=gaming');
    assert.equal(bad.status, 400);
    const run = await createApp(t.deps).request('/v1/recommendation?benchmark=run');
    assert.equal(run.status, 400);
    assert.match(
      ((await run.json()) as { detail: string }).detail,
      /run_cpu_benchmark \(POST \/v1\/benchmarks\)/,
    );
  });

  it('the REST and CLI actions of the advice work as given (dry run), also for a plan to create', async () => {
    t = await testDeps({}, { bench: fakeBench([]).bench });
    const app = createApp(t.deps);
    for (const workload of ['database', 'latency'] as const) {
      const r = Recommendation.parse(await runOperation(op, { workload, benchmark: 'none' }, ctx()));
      assert.equal(r.changeRecommended, true, workload);
      const rest = r.actions.find((a) => a.via === 'rest')!.request!;
      const res = await app.request(rest.path, {
        method: rest.method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...rest.body, dryRun: true }),
      });
      assert.equal(res.status, 200, workload);
      const viaRest = SetPlanResult.parse(await res.json());
      assert.equal(viaRest.changed, true, workload);
      assert.equal(viaRest.after.kind, r.recommended?.kind, workload);

      const [program, ...args] = r.actions.find((a) => a.via === 'cli')!.command.split(' ');
      assert.equal(program, 'powerplan');
      const viaCli = await runCli([...args, '--dry-run', '--json'], t.env);
      assert.equal(viaCli.code, 0, viaCli.stderr);
      assert.deepEqual(SetPlanResult.parse(JSON.parse(viaCli.stdout)), viaRest, workload);
    }
    assert.equal((await t.deps.backend.getActive()).plan?.id, SCHEME.balanced, 'dry runs changed nothing');
  });

  it('CLI: powerplan recommend prints the advice; --json the REST shape', async () => {
    t = await testDeps();
    const human = await runCli(['recommend', '--benchmark', 'none'], t.env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Switch from Balanced to High performance/);
    assert.match(human.stdout, /powercfg \/setactive 8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c/);
    const json = await runCli(['recommend', '--workload', 'latency', '--json'], t.env);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(Recommendation.parse(JSON.parse(json.stdout)).workload, 'latency');
    // Measuring is its own command; the old flag value says which, in CLI words.
    const run = await runCli(['recommend', '--benchmark', 'run'], t.env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /'run' is not offered.*powerplan bench\b/);
    assert.doesNotMatch(run.stderr, /run_cpu_benchmark|POST \/v1/);
  });
});
