/**
 * The A/B comparison on the simulated backend: figures for each plan, the original plan restored on
 * success, error, cancellation and shutdown, the plan lock shared with set_power_plan, and the
 * restore journal replayed after a crash.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { ComparisonResult } from '../../src/domain/advice.ts';
import { PowerPlanError } from '../../src/domain/errors.ts';
import { operationByName } from '../../src/operations/index.ts';
import { runOperation } from '../../src/operations/run.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { contextOf } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { GatedBench } from './gated-bench.ts';

const compare = operationByName('compare_power_plans')!;
const setPlan = operationByName('set_power_plan')!;

const activeId = async (t: TestDeps) => (await t.deps.backend.getActive()).plan?.id;

const audits = async (t: TestDeps) =>
  (await t.deps.store.readLines('audit.jsonl')) as { operation: string; result: string; caller: string }[];

let t: TestDeps | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** The original plan is in force again and no restore is owed. */
const assertRestored = async (t: TestDeps) => {
  assert.equal(await activeId(t), SCHEME.balanced, 'the original plan is restored');
  assert.equal(await t.deps.planChange.journal(), undefined, 'no restore is owed');
};

describe('compare_power_plans (simulated backend)', () => {
  it('measures each plan with the real benchmark and restores the original', async () => {
    t = await testDeps();
    const progress: number[] = [];
    const out = ComparisonResult.parse(
      await runOperation(
        compare,
        { settleMs: 10, threads: 1, idleGapsMs: [20], repetitions: 1, force: true },
        contextOf(t.deps, { progress: (p) => progress.push(p.progress) }),
      ),
    );
    assert.equal(out.dryRun, false);
    assert.deepEqual(
      out.results.map((r) => r.plan.id),
      [SCHEME.balanced, SCHEME.highPerformance],
    );
    assert.equal(out.results[0]!.original, true);
    assert.equal(out.results[0]!.difference, null);
    const d = out.results[1]!.difference!;
    assert.ok(
      d.burstAfterIdle.low <= d.burstAfterIdle.percent && d.burstAfterIdle.percent <= d.burstAfterIdle.high,
    );
    for (const r of out.results) {
      const stored = await t.deps.bench.get(r.benchmarkId);
      assert.equal(stored.environment.activePlan?.plan?.id, r.plan.id, 'each benchmark ran under its plan');
      // The ladder as asked: once, one gap.
      assert.equal(stored.repetitions, 1);
      assert.equal(stored.phases.burstsAfterIdle.length, 1);
    }
    assert.equal(out.restored, true);
    await assertRestored(t);
    assert.ok(out.recommendation);
    assert.equal(out.recommendation.basis.kind, 'comparison');
    assert.ok(progress.length > 2 && progress.at(-1)! >= progress[0]!);
    const log = await audits(t);
    assert.ok(
      log.some(
        (a) => a.operation === 'compare_power_plans' && a.result === 'changed' && a.caller === 'local',
      ),
    );
    assert.ok(
      log.some((a) => a.operation === 'compare_restore' && a.result === 'restored' && a.caller === 'local'),
    );
  });

  it('dry run: names the plans, switches nothing, measures nothing', async () => {
    const bench = new GatedBench();
    t = await testDeps({}, { bench: bench.asService() });
    const out = ComparisonResult.parse(
      await runOperation(
        compare,
        { dryRun: true, plans: ['power-saver', 'high-performance'] },
        contextOf(t.deps),
      ),
    );
    assert.deepEqual(
      out.planned.map((p) => p.id),
      [SCHEME.balanced, SCHEME.powerSaver, SCHEME.highPerformance],
    );
    assert.equal(bench.runs.length, 0);
    assert.equal(await t.deps.planChange.journal(), undefined);
  });

  it('holds the plan lock: a concurrent set_power_plan waits, then gets 409; the journal exists meanwhile', async () => {
    const bench = new GatedBench();
    t = await testDeps({}, { bench: bench.asService() });
    const running = runOperation(compare, { settleMs: 0 }, contextOf(t.deps));
    await bench.started_(2);
    assert.equal(await activeId(t), SCHEME.highPerformance, 'switched for the second run');
    assert.equal((await t.deps.planChange.journal())?.restorePlanId, SCHEME.balanced);
    await assert.rejects(
      runOperation(setPlan, { plan: 'power-saver' }, contextOf(t.deps)),
      (e: PowerPlanError) => e.code === 'conflict',
    );
    bench.release();
    const out = ComparisonResult.parse(await running);
    assert.deepEqual(
      bench.runs.map((r) => r.plan),
      [SCHEME.balanced, SCHEME.highPerformance],
    );
    assert.equal(
      out.recommendation?.recommended?.id,
      SCHEME.highPerformance,
      'the synthetic HP run had no penalty',
    );
    await assertRestored(t);
  });

  it('cancellation restores the original plan, then answers cancelled', async () => {
    const bench = new GatedBench();
    t = await testDeps({}, { bench: bench.asService() });
    const caller = new AbortController();
    const running = runOperation(compare, { settleMs: 0 }, contextOf(t.deps, { signal: caller.signal }));
    await bench.started_(2);
    caller.abort();
    await assert.rejects(running, (e: PowerPlanError) => e.code === 'cancelled');
    await assertRestored(t);
  });

  it('an error in a run restores the original plan and is passed on', async () => {
    const bench = new GatedBench(1);
    bench.fail = new PowerPlanError('busy', 'The CPU is already 90% busy.');
    t = await testDeps({}, { bench: bench.asService() });
    const running = runOperation(compare, { settleMs: 0, plans: ['power-saver'] }, contextOf(t.deps));
    await bench.started_(1);
    bench.release();
    await assert.rejects(running, (e: PowerPlanError) => e.code === 'busy');
    await assertRestored(t);
  });

  it('shutdown cancels the comparison and settled() waits for the restore', async () => {
    const bench = new GatedBench();
    t = await testDeps({}, { bench: bench.asService() });
    const running = runOperation(compare, { settleMs: 0 }, contextOf(t.deps)).catch((e: unknown) => e);
    await bench.started_(2);
    t.deps.shutdown.abort(new Error('shutting down'));
    await t.deps.comparisons.settled();
    await assertRestored(t);
    assert.equal(((await running) as PowerPlanError).code, 'cancelled');
  });

  it('refuses a comparison with only the active plan', async () => {
    t = await testDeps({}, { bench: new GatedBench().asService() });
    await assert.rejects(
      runOperation(compare, { plans: ['balanced'] }, contextOf(t.deps)),
      (e: PowerPlanError) => e.code === 'invalid_input',
    );
  });

  it('needs the control scope', async () => {
    t = await testDeps({}, { bench: new GatedBench().asService() });
    await assert.rejects(
      runOperation(compare, {}, contextOf(t.deps, { caller: { name: 'reader', scopes: ['benchmark'] } })),
      (e: PowerPlanError) => e.code === 'forbidden',
    );
  });
});

describe('restore journal', () => {
  /** The journal of an earlier version, as it was written before the first switch. */
  const legacyJournal = (pid: number) => ({
    version: 1,
    pid,
    startedAt: new Date().toISOString(),
    caller: 'local',
    originalPlanId: SCHEME.balanced,
    originalPlanName: 'Balanced',
    planned: [SCHEME.balanced, SCHEME.highPerformance],
  });

  it('a journal of an earlier version left by a crash is migrated, replayed at start-up, removed and audited as the service', async () => {
    t = await testDeps({}, { bench: new GatedBench().asService() });
    await t.deps.backend.setActive(SCHEME.highPerformance);
    await t.deps.store.write(
      'compare-journal.json',
      legacyJournal(spawnSync(process.execPath, ['-e', '0']).pid!),
    );
    await t.deps.planChange.recover();
    assert.equal(await activeId(t), SCHEME.balanced);
    assert.equal(existsSync(t.deps.store.path('compare-journal.json')), false);
    assert.equal(existsSync(t.deps.store.path('restore-journal.json')), false);
    const restore = (await audits(t)).find((a) => a.operation === 'compare_restore');
    assert.equal(restore?.caller, 'service');
    assert.equal(restore?.result, 'restored');
  });

  it('while another live process holds the plan lock its journal is left alone, and a new comparison is refused', async () => {
    t = await testDeps({}, { bench: new GatedBench().asService() });
    await t.deps.backend.setActive(SCHEME.highPerformance);
    await t.deps.store.write('restore-journal.json', {
      version: 2,
      kind: 'comparison',
      restorePlanId: SCHEME.balanced,
      restorePlanName: 'Balanced',
      createdAt: new Date().toISOString(),
      createdBy: 'local',
      holds: [],
      planned: [SCHEME.balanced, SCHEME.highPerformance],
    });
    // The comparison's process (alive: our parent) holds the plan lock for its whole run.
    await writeFile(
      join(t.dir, 'plan.lock'),
      JSON.stringify({
        pid: process.ppid,
        start: null,
        instance: 'other',
        token: 'x',
        startedAt: new Date().toISOString(),
        what: 'compare_power_plans (local)',
      }),
    );
    await t.deps.planChange.recover();
    assert.equal(await activeId(t), SCHEME.highPerformance);
    assert.ok(await t.deps.planChange.journal());
    await assert.rejects(
      runOperation(compare, {}, contextOf(t.deps)),
      (e: PowerPlanError) => e.code === 'conflict',
    );
  });
});
