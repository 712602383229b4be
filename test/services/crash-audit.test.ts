/**
 * Every change leaves exactly one audit record, also when the process dies between the switch and
 * its record. The audit trail is made a named pipe with no reader: the append blocks right after
 * the switch and its read-back, the test sees the new plan in force and SIGKILLs the server there.
 * The next start writes the record of the switch that happened, once; a change that never reached
 * its switch is recorded as failed. Temporary files left by a crash are removed at start.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { startServer } from '../support/processes.ts';
import { until } from '../support/until.ts';

interface Line {
  operation: string;
  caller: string;
  result: string;
  after: { id: string } | null;
  error?: string;
}

describe('a plan change killed between its switch and its audit record', () => {
  const t = depsPerBlock();
  const audits = async () => (await t.deps.store.readLines('audit.jsonl')) as Line[];
  const pending = () => t.deps.store.path('plan-change.json');
  const simulatedPlan = async () => (await t.deps.backend.getActive()).plan?.id;

  it('the next start writes the record of the switch that happened, exactly once', async () => {
    const audit = t.deps.store.path('audit.jsonl');
    rmSync(audit, { force: true });
    execFileSync('mkfifo', [audit]);
    const server = await startServer(t.env);
    try {
      const request = fetch(`${server.url}/v1/plans/active`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'high-performance' }),
      }).catch((e: unknown) => e);
      // The switch and its read-back are done; the record's append waits on the pipe.
      await until(
        'the plan switched',
        async () => (await simulatedPlan()) === SCHEME.highPerformance,
        20_000,
      );
      assert.equal(existsSync(pending()), true, 'the change in flight is journaled');
      await server.stop('SIGKILL');
      await request;
    } finally {
      await server.stop('SIGKILL');
    }
    rmSync(audit);
    assert.deepEqual(await audits(), []);

    const second = await startServer(t.env);
    try {
      const sets = (await audits()).filter((a) => a.operation === 'set_power_plan');
      assert.equal(sets.length, 1, JSON.stringify(sets));
      assert.deepEqual(
        [sets[0]!.caller, sets[0]!.result, sets[0]!.after?.id],
        ['local', 'changed', SCHEME.highPerformance],
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
    await t.deps.store.write('plan-change.json', {
      version: 1,
      startedAt: new Date().toISOString(),
      caller: 'ops',
      entry: {
        operation: 'set_power_plan',
        input: { plan: 'power-saver' },
        before: { id: SCHEME.highPerformance, name: 'High performance' },
        after: { id: SCHEME.powerSaver, name: 'Power saver' },
        result: 'changed',
      },
      followUps: [],
      clearJournal: false,
    });
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
