/**
 * Every change leaves exactly one audit record, also when the process dies between the switch and
 * its record: the state such a kill leaves (the plan switched, the change journaled, no record);
 * (a FIFO audit log, which once blocked the append to kill the server there, is refused now).
 * The next start writes the record of the switch that happened, once; a change that never reached
 * its switch is recorded as failed. Temporary files left by a crash are removed at start.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { startServer } from '../support/processes.ts';

interface Line {
  operation: string;
  caller: string;
  result: string;
  after: { id: string } | null;
  error?: string;
}

/** The journal of a set_power_plan in flight, as the plan-change service writes it before the switch. */
const journal = (caller: string, plan: string, before: [string, string], after: [string, string]) => ({
  version: 1,
  startedAt: new Date().toISOString(),
  caller,
  entry: {
    operation: 'set_power_plan',
    input: { plan },
    before: { id: before[0], name: before[1] },
    after: { id: after[0], name: after[1] },
    result: 'changed',
  },
  followUps: [],
  clearJournal: false,
});

describe('a plan change killed between its switch and its audit record', () => {
  const t = depsPerBlock();
  const audits = async () => (await t.deps.store.readLines('audit.jsonl')) as Line[];
  const pending = () => t.deps.store.path('plan-change.json');
  const simulatedPlan = async () => (await t.deps.backend.getActive()).plan?.id;

  it('the next start writes the record of the switch that happened, exactly once', async () => {
    // The state a SIGKILL leaves between the switch and its record: the plan switched and the
    // change journaled, no record. (A FIFO as the audit log no longer blocks the append to kill the
    // server there: state files that are not regular files are refused; see docs/SECURITY.md.)
    await t.deps.backend.setActive(SCHEME.highPerformance);
    await t.deps.store.write(
      'plan-change.json',
      journal(
        'local-admin',
        'high-performance',
        [SCHEME.balanced, 'Balanced'],
        [SCHEME.highPerformance, 'High performance'],
      ),
    );
    assert.equal(await simulatedPlan(), SCHEME.highPerformance);
    assert.deepEqual(await audits(), []);

    const second = await startServer(t.env);
    try {
      const sets = (await audits()).filter((a) => a.operation === 'set_power_plan');
      assert.equal(sets.length, 1, JSON.stringify(sets));
      assert.deepEqual(
        [sets[0]!.caller, sets[0]!.result, sets[0]!.after?.id],
        ['local-admin', 'changed', SCHEME.highPerformance],
      );
      assert.equal(existsSync(pending()), false);
    } finally {
      assert.equal(await second.stop('SIGTERM'), 0);
    }
    // A third start finds nothing left to settle: still one record.
    const third = await startServer(t.env);
    await third.stop('SIGTERM');
    assert.equal((await audits()).filter((a) => a.operation === 'set_power_plan').length, 1);
  });

  it('a change journaled but never switched is recorded as failed, and crash leftovers are removed', async () => {
    await t.deps.store.write(
      'plan-change.json',
      journal(
        'ops',
        'power-saver',
        [SCHEME.highPerformance, 'High performance'],
        [SCHEME.powerSaver, 'Power saver'],
      ),
    );
    // What a SIGKILL leaves mid-write: a document's temp file and the plan lock's link source,
    // both named after a process that is gone.
    const dead = Number(execFileSync(process.execPath, ['-p', 'process.pid']).toString());
    const leftovers = [
      `simulated-backend.json.${dead}.0badf00d.tmp`,
      `benchmarks.json.${dead}.1badf00d.tmp`,
      `plan.lock.${dead}.2badf00d.tmp`,
    ];
    for (const name of leftovers) writeFileSync(join(t.dir, name), '{');
    const server = await startServer(t.env);
    await server.stop('SIGTERM');
    const failed = (await audits()).filter((a) => a.operation === 'set_power_plan' && a.caller === 'ops');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.result, 'failed');
    assert.match(failed[0]!.error ?? '', /stopped before the switch took effect/);
    assert.equal(await simulatedPlan(), SCHEME.highPerformance);
    assert.equal(existsSync(pending()), false);
    assert.deepEqual(
      readdirSync(t.dir).filter((n) => n.endsWith('.tmp')),
      [],
    );
  });
});
