import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ActivePlan, PlanList, SetPlanResult, SystemInfo } from '../../src/domain/schemas.ts';
import { defaultSimulatedState } from '../../src/platform/simulated/simulated-state.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { appOver } from '../support/server.ts';

// One set of deps and one app for every test of this file.
const t = depsPerBlock();
const app = appOver(t);

const put = (body: unknown, raw?: string) =>
  app.request('/v1/plans/active', {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  });

const activeId = async () => ((await (await app.request('/v1/plans/active')).json()) as ActivePlan).plan?.id;

const expectProblem = async (res: Response, status: number, code: string, detail?: RegExp) => {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  const body = (await res.json()) as {
    type: string;
    title: string;
    status: number;
    detail: string;
    code: string;
  };
  assert.equal(body.status, status);
  assert.equal(body.code, code);
  assert.equal(body.type, `urn:powerplan:problem:${code}`);
  assert.ok(body.title.length > 0);
  if (detail) assert.match(body.detail, detail);
  return body;
};

describe('REST surface on the simulated backend', () => {
  it('GET /healthz answers ok', async () => {
    const res = await app.request('/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok', damaged: [] });
  });

  it('GET /v1/system describes the machine and the backend', async () => {
    const res = await app.request('/v1/system');
    assert.equal(res.status, 200);
    const body = SystemInfo.parse(await res.json());
    assert.equal(body.backend.name, 'simulated');
    assert.ok(body.cpu.logicalCpus >= 1);
    assert.equal(body.backend.capabilities.setPlan, true);
  });

  it('GET /v1/plans lists the stock plans with Balanced active', async () => {
    const body = PlanList.parse(await (await app.request('/v1/plans')).json());
    assert.equal(body.backend, 'simulated');
    assert.equal(body.activePlanId, SCHEME.balanced);
    assert.deepEqual(
      body.plans.map((p) => p.id).sort(),
      [SCHEME.balanced, SCHEME.highPerformance, SCHEME.powerSaver].sort(),
    );
  });

  it('GET /v1/plans/active gives the settings of Balanced', async () => {
    const body = ActivePlan.parse(await (await app.request('/v1/plans/active')).json());
    assert.equal(body.plan?.kind, 'balanced');
    assert.deepEqual(body.processor.minStatePercent, { ac: 5, dc: 5 });
    assert.equal(body.canSet, true);
    assert.equal(body.policyManaged, false);
  });

  it('PUT with dryRun reports the change and changes nothing', async () => {
    const res = await put({ plan: 'high-performance', dryRun: true });
    assert.equal(res.status, 200);
    const body = SetPlanResult.parse(await res.json());
    assert.equal(body.changed, true);
    assert.equal(body.dryRun, true);
    assert.equal(body.after.id, SCHEME.highPerformance);
    assert.equal(await activeId(), SCHEME.balanced);
  });

  it('PUT sets by kind alias, then the same plan again is unchanged', async () => {
    const first = SetPlanResult.parse(await (await put({ plan: 'high-performance' })).json());
    assert.equal(first.changed, true);
    assert.equal(first.before.id, SCHEME.balanced);
    assert.equal(first.after.id, SCHEME.highPerformance);
    assert.equal(await activeId(), SCHEME.highPerformance);
    const again = SetPlanResult.parse(await (await put({ plan: SCHEME.highPerformance })).json());
    assert.equal(again.changed, false);
  });

  it('accepts powercfg aliases, braced upper-case GUIDs and exact names', async () => {
    assert.equal(
      SetPlanResult.parse(await (await put({ plan: 'SCHEME_MAX' })).json()).after.id,
      SCHEME.powerSaver,
    );
    const upper = `{${SCHEME.balanced.toUpperCase()}}`;
    assert.equal(SetPlanResult.parse(await (await put({ plan: upper })).json()).after.id, SCHEME.balanced);
    assert.equal(
      SetPlanResult.parse(await (await put({ plan: 'high PERFORMANCE' })).json()).after.id,
      SCHEME.highPerformance,
    );
    await put({ plan: 'balanced' });
  });

  it('records each real change in the audit log', async () => {
    const lines = (await readFile(join(t.dir, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const changes = lines.filter((l) => l.operation === 'set_power_plan' && l.result === 'changed');
    assert.ok(changes.length >= 4);
    assert.equal(changes[0].caller, 'local');
    assert.equal(changes[0].after.id, SCHEME.highPerformance);
  });

  it('unknown plan: 404 naming the available plans, nothing changed', async () => {
    const body = await expectProblem(
      await put({ plan: 'turbo-max' }),
      404,
      'not_found',
      /available: .*Balanced/,
    );
    assert.ok(body.detail.includes(SCHEME.highPerformance));
    assert.equal(await activeId(), SCHEME.balanced);
  });

  it('a missing Ultimate Performance says how to create it, and create: true does', async () => {
    await expectProblem(await put({ plan: 'ultimate-performance' }), 404, 'not_found', /create: true/);
    const dry = SetPlanResult.parse(
      await (await put({ plan: 'ultimate-performance', create: true, dryRun: true })).json(),
    );
    assert.equal(dry.created, true);
    assert.equal((await (await app.request('/v1/plans')).json()).plans.length, 3, 'dry run created nothing');
    const made = SetPlanResult.parse(
      await (await put({ plan: 'ultimate-performance', create: true })).json(),
    );
    assert.equal(made.created, true);
    assert.equal(made.after.kind, 'ultimate-performance');
    assert.equal(await activeId(), made.after.id);
    await put({ plan: 'balanced' });
  });

  it('a benchmark asked for more ladder runs or gaps than it takes gets 400, and nothing runs', async () => {
    const bench = (body: unknown) =>
      app.request('/v1/benchmarks', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await expectProblem(await bench({ force: true, repetitions: 16 }), 400, 'invalid_input', /repetitions/);
    await expectProblem(await bench({ force: true, repetitions: 0 }), 400, 'invalid_input', /repetitions/);
    const thirteen = Array.from({ length: 13 }, (_, i) => (i + 1) * 10);
    await expectProblem(
      await bench({ force: true, idleGapsMs: thirteen }),
      400,
      'invalid_input',
      /idleGapsMs/,
    );
    assert.equal(t.deps.bench.running, false);
  });

  it('malformed JSON, wrong types, unknown fields and control characters get 400', async () => {
    await expectProblem(await put(undefined, '{"plan": '), 400, 'invalid_input', /not valid JSON/);
    await expectProblem(await put(undefined, '["balanced"]'), 400, 'invalid_input', /JSON object/);
    await expectProblem(await put({ plan: 42 }), 400, 'invalid_input', /plan/);
    await expectProblem(await put({ plan: 'balanced', dryRun: 'yes' }), 400, 'invalid_input', /dryRun/);
    await expectProblem(
      await put({ plan: 'balanced', extra: 1 }),
      400,
      'invalid_input',
      /unknown field.*extra/,
    );
    await expectProblem(
      await put({ plan: 'high-performance\n& calc' }),
      400,
      'invalid_input',
      /control characters/,
    );
    await expectProblem(await put({}), 400, 'invalid_input', /plan/);
    await expectProblem(
      await app.request('/v1/plans?verbose=1'),
      400,
      'invalid_input',
      /unknown field.*verbose/,
    );
    assert.equal(await activeId(), SCHEME.balanced);
  });

  it('an oversized body gets 413 and changes nothing', async () => {
    const res = await put(undefined, JSON.stringify({ plan: 'high-performance', pad: 'x'.repeat(200_000) }));
    await expectProblem(res, 413, 'payload_too_large');
    assert.equal(await activeId(), SCHEME.balanced);
  });

  it('unknown routes get a problem+json 404', async () => {
    await expectProblem(await app.request('/v1/nothing'), 404, 'not_found', /No route/);
  });

  it('a name shared by two plans gets 409 listing both ids', async () => {
    const state = defaultSimulatedState();
    const copy = { ...state.plans[1]!, id: '11111111-2222-3333-4444-555555555555', builtin: false };
    await writeFile(
      join(t.dir, 'simulated-backend.json'),
      JSON.stringify({ ...state, plans: [...state.plans, copy] }),
    );
    const body = await expectProblem(
      await put({ plan: 'High performance' }),
      409,
      'conflict',
      /More than one plan/,
    );
    assert.ok(body.detail.includes(SCHEME.highPerformance) && body.detail.includes(copy.id));
    assert.equal(await activeId(), SCHEME.balanced);
  });
});
