/**
 * The comparison and the advice on the Windows backend, driven through the powercfg emulator (a
 * German Windows, code page 850): the switches and the restore are real powercfg calls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ComparisonResult, Recommendation } from '../../src/domain/advice.ts';
import type { PowerPlanError } from '../../src/domain/errors.ts';
import { operationByName } from '../../src/operations/index.ts';
import { runOperation } from '../../src/operations/run.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { type Emulated, emulate } from '../platform/windows/emulator.ts';
import { contextOf } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { GatedBench } from './gated-bench.ts';

const compare = operationByName('compare_power_plans')!;
const recommendOp = operationByName('get_recommendation')!;

describe('comparison on the Windows backend (powercfg emulator)', () => {
  let emu: Emulated;
  let t: TestDeps;
  before(async () => {
    emu = await emulate({ locale: 'de-DE', codepage: 850 });
  });
  after(async () => {
    await t?.cleanup();
    await emu.cleanup();
  });

  const ctx = (bench: GatedBench, signal?: AbortSignal) =>
    contextOf({ ...t.deps, bench: bench.asService() }, signal ? { signal } : {});

  it('advice names the plan by GUID, not by its localized name', async () => {
    t = await testDeps({}, { backend: emu.backend });
    const r = Recommendation.parse(
      await runOperation(recommendOp, { benchmark: 'none' }, ctx(new GatedBench())),
    );
    assert.equal(r.recommended?.id, SCHEME.highPerformance);
    assert.ok(r.actions.some((a) => a.command === `powercfg /setactive ${SCHEME.highPerformance}`));
  });

  it('switches with powercfg /setactive for each plan and restores the original', async () => {
    const bench = new GatedBench(99);
    const before = (await emu.calls('/setactive')).length;
    const out = ComparisonResult.parse(await runOperation(compare, { settleMs: 0 }, ctx(bench)));
    assert.deepEqual(
      out.results.map((r) => r.plan.id),
      [SCHEME.balanced, SCHEME.highPerformance],
    );
    assert.deepEqual(
      bench.runs.map((r) => r.plan),
      [SCHEME.balanced, SCHEME.highPerformance],
      'each run saw its plan active through powercfg',
    );
    const calls = (await emu.calls('/setactive')).slice(before).map((a) => a[1]);
    assert.deepEqual(calls, [SCHEME.highPerformance, SCHEME.balanced]);
    assert.equal((await emu.state()).active, SCHEME.balanced);
    assert.equal(await t.deps.planChange.journal(), undefined);
  });

  it('cancellation mid-run restores the original through powercfg', async () => {
    const bench = new GatedBench(2);
    const caller = new AbortController();
    const running = runOperation(compare, { settleMs: 0 }, ctx(bench, caller.signal));
    await bench.started_(2);
    assert.equal((await emu.state()).active, SCHEME.highPerformance);
    caller.abort();
    await assert.rejects(running, (e: PowerPlanError) => e.code === 'cancelled');
    assert.equal((await emu.state()).active, SCHEME.balanced);
  });

  it('a switch refused for lack of rights is reported before any plan changed', async () => {
    await emu.update((s) => {
      s.notElevated = true;
    });
    const bench = new GatedBench(99);
    await assert.rejects(runOperation(compare, { settleMs: 0 }, ctx(bench)), (e: PowerPlanError) =>
      ['forbidden', 'os_error'].includes(e.code),
    );
    assert.equal((await emu.state()).active, SCHEME.balanced);
    assert.equal(await t.deps.planChange.journal(), undefined);
    await emu.update((s) => {
      s.notElevated = false;
    });
  });
});
