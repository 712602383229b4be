/**
 * Every caller of the plan-change service writes the same audit record shape: time, caller,
 * operation (one of the named operations), input, before, after (a plan as {id, name}, or null),
 * result, and error only when it failed. One test per caller: set, hold start, release, expiry,
 * recovery, drift correction, comparison step and comparison restore.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { type AuditOperation, AuditRecord } from '../../src/domain/audit.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { GatedBench } from '../compare/gated-bench.ts';
import { expireInJournal } from '../holds/journal.ts';
import { call } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';

const SHAPE = ['after', 'before', 'caller', 'input', 'operation', 'result', 'time'];

let t: TestDeps | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** The records written since `from`, each checked against the one shape. */
const recordsSince = async (from: number, operation: AuditOperation) => {
  const all = (await t!.deps.store.readLines('audit.jsonl')).slice(from) as Record<string, unknown>[];
  for (const r of all) {
    AuditRecord.parse(r);
    assert.deepEqual(
      Object.keys(r)
        .filter((k) => k !== 'error' && k !== 'remote')
        .sort(),
      SHAPE,
      JSON.stringify(r),
    );
    assert.equal('error' in r, r.result === 'failed', JSON.stringify(r));
    assert.equal(typeof r.input, 'object', JSON.stringify(r));
    for (const plan of [r.before, r.after]) {
      if (plan !== null)
        assert.deepEqual(Object.keys(plan as object).sort(), ['id', 'name'], JSON.stringify(r));
    }
  }
  const mine = all.filter((r) => r.operation === operation);
  assert.ok(mine.length > 0, `a ${operation} record was written`);
  return mine;
};

const count = async () => (await t!.deps.store.readLines('audit.jsonl')).length;

/** The record of a restore since `from`: back on Balanced, restored. */
const assertRestoreRecord = async (from: number, operation: AuditOperation) => {
  const [restore] = await recordsSince(from, operation);
  assert.deepEqual(
    [restore!.after, restore!.result],
    [{ id: SCHEME.balanced, name: 'Balanced' }, 'restored'],
  );
};

const holdHighPerformance = () =>
  call<{ hold: { id: string } }>(t!.deps, 'hold_power_plan', { plan: 'high-performance', for: '10m' });

describe('one audit record shape for every caller of the plan-change service', () => {
  it('set_power_plan', async () => {
    t = await testDeps();
    const from = await count();
    await call(t.deps, 'set_power_plan', { plan: 'high-performance' });
    const [r] = await recordsSince(from, 'set_power_plan');
    assert.deepEqual(
      [r!.before, r!.after, r!.result, r!.caller],
      [
        { id: SCHEME.balanced, name: 'Balanced' },
        { id: SCHEME.highPerformance, name: 'High performance' },
        'changed',
        'local',
      ],
    );
  });

  it('hold start, release and the restore it causes', async () => {
    t = await testDeps();
    let from = await count();
    const h = await holdHighPerformance();
    const [started] = await recordsSince(from, 'hold_power_plan');
    assert.equal((started!.after as { id: string }).id, SCHEME.highPerformance);
    from = await count();
    await call(t.deps, 'release_power_plan', { id: h.hold.id });
    await recordsSince(from, 'release_power_plan');
    await assertRestoreRecord(from, 'hold_restore');
  });

  it('hold expiry (one of two holds, then the last one with its restore)', async () => {
    t = await testDeps();
    const a = await holdHighPerformance();
    const b = await holdHighPerformance();
    let from = await count();
    await expireInJournal(t.deps.store, a.hold.id);
    await t.deps.holds.list();
    const [expired] = await recordsSince(from, 'hold_expire');
    assert.equal(expired!.caller, 'service');
    from = await count();
    await expireInJournal(t.deps.store, b.hold.id);
    await t.deps.holds.list();
    const [restored] = await recordsSince(from, 'hold_restore');
    assert.equal(restored!.caller, 'service');
  });

  it('hold recovery at start', async () => {
    t = await testDeps();
    await holdHighPerformance();
    await t.deps.backend.setActive(SCHEME.balanced); // behind the service's back, or a crash before the switch
    const from = await count();
    await t.deps.planChange.recover();
    const [r] = await recordsSince(from, 'hold_recover');
    assert.deepEqual(
      [r!.before, r!.after, r!.caller],
      [
        { id: SCHEME.balanced, name: 'Balanced' },
        { id: SCHEME.highPerformance, name: 'High performance' },
        'service',
      ],
    );
  });

  it('drift correction of the desired state', async () => {
    t = await testDeps({ POWERPLAN_DESIRED_PLAN: 'high-performance', POWERPLAN_ENFORCE: 'true' });
    const from = await count();
    await t.deps.desired.check();
    await recordsSince(from, 'desired_state_check');
    const [r] = await recordsSince(from, 'enforce_desired_state');
    assert.deepEqual(
      [r!.after, r!.result, r!.caller],
      [{ id: SCHEME.highPerformance, name: 'High performance' }, 'changed', 'service'],
    );
  });

  it('comparison steps and the comparison restore', async () => {
    t = await testDeps({}, { bench: new GatedBench(99).asService() });
    const from = await count();
    await call(t.deps, 'compare_power_plans', { settleMs: 0 });
    const steps = await recordsSince(from, 'compare_power_plans');
    assert.deepEqual((steps[0]!.before as { id: string }).id, SCHEME.balanced);
    await assertRestoreRecord(from, 'compare_restore');
  });

  it('a failed switch is audited in the same shape, with its error', async () => {
    t = await testDeps();
    const real = t.deps.backend.setActive.bind(t.deps.backend);
    t.deps.backend.setActive = async () => {
      throw new Error('powercfg failed');
    };
    const from = await count();
    await assert.rejects(call(t.deps, 'set_power_plan', { plan: 'high-performance' }), /powercfg failed/);
    const [r] = await recordsSince(from, 'set_power_plan');
    assert.deepEqual([r!.result, r!.error], ['failed', 'powercfg failed']);
    t.deps.backend.setActive = real;
  });
});
