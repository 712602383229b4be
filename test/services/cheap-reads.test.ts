/**
 * Cheap reads without stale answers: a read of the plan in force that finds the state files
 * unchanged parses no schema and answers the same (frozen) objects, yet a change by another writer
 * is seen at the next read; an operation's output is still checked whenever the answer is new; and
 * the operation context carries no accessor of its own (a per-request accessor gives every request
 * its own hidden class, which keeps it alive through the young-generation GCs).
 */
import assert from 'node:assert/strict';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { localCaller } from '../../src/domain/scopes.ts';
import { freezeDeep, isFrozenDeep, jsonText } from '../../src/lib/frozen.ts';
import { defineOperation, type OperationContext, readOnly } from '../../src/operations/define.ts';
import { getActivePowerPlan } from '../../src/operations/get-active-power-plan.ts';
import { noInput } from '../../src/operations/inputs.ts';
import { runOperation } from '../../src/operations/run.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { call, contextOf } from '../support/call.ts';
import { counted } from '../support/counted.ts';
import { depsPerBlock } from '../support/fixture.ts';

describe('cheap reads of the plan in force', () => {
  const t = depsPerBlock();
  const statePath = () => join(t.dir, 'simulated-backend.json');
  const activeId = async (app: ReturnType<typeof createApp>) =>
    ((await (await app.request('/v1/plans/active')).json()) as { plan: { id: string } }).plan.id;

  it('a repeated read parses no schema and answers the same objects while the files are unchanged', async () => {
    // A switch writes the simulated state and the read-back: both files are then read per request.
    await call(t.deps, 'set_power_plan', { plan: 'high-performance' });
    const first = await t.deps.backend.getActive();
    assert.equal(await t.deps.backend.getActive(), first, 'the backend answers the same object');
    assert.ok(isFrozenDeep(first), 'the shared answer is deeply frozen');
    const ctx = () => contextOf(t.deps);
    const output = await runOperation(getActivePowerPlan, {}, ctx());
    const parses = counted(getActivePowerPlan.output, 'parse');
    const safeParses = counted(getActivePowerPlan.input, 'safeParse');
    try {
      const app = createApp(t.deps);
      const bodies = new Set<string>();
      for (let i = 0; i < 5; i++) bodies.add(await (await app.request('/v1/plans/active')).text());
      assert.equal(await runOperation(getActivePowerPlan, {}, ctx()), output, 'the checked output is reused');
      assert.equal(parses.calls, 0, 'no output parse for an answer checked before');
      assert.equal(safeParses.calls, 0, 'no input parse for an empty input');
      assert.deepEqual([...bodies], [jsonText(output)]);
      assert.equal(JSON.parse(jsonText(output)).plan.id, SCHEME.highPerformance);
    } finally {
      parses.restore();
      safeParses.restore();
    }
  });

  it('a change by another writer is seen at the next read, in place or replaced', async () => {
    const app = createApp(t.deps);
    assert.equal(await activeId(app), SCHEME.highPerformance);
    // File times are as coarse as a kernel tick: the outside write must not share the last one.
    await sleep(30);
    const state = JSON.parse(await readFile(statePath(), 'utf8')) as { activeId: string };
    // In place (same inode, same size: the ids are equally long), as an editor or a test seed writes.
    await writeFile(statePath(), JSON.stringify({ ...state, activeId: SCHEME.powerSaver }));
    assert.equal(await activeId(app), SCHEME.powerSaver);
    // Replaced by a rename, as another powerplan process writes.
    const tmp = `${statePath()}.outside`;
    await writeFile(tmp, JSON.stringify({ ...state, activeId: SCHEME.balanced }));
    await rename(tmp, statePath());
    assert.equal(await activeId(app), SCHEME.balanced);
  });
});

describe('output validation of an operation', () => {
  const t = depsPerBlock();
  const answers: unknown[] = [];
  let seen: OperationContext[] = [];
  const probe = defineOperation({
    name: 'probe_output',
    title: 'Probe',
    description: 'Answers what the test queued.',
    input: noInput,
    output: z.object({ n: z.number() }),
    annotations: readOnly,
    scope: 'read',
    http: { method: 'GET', path: '/v1/probe' },
    cli: { command: ['probe'] },
    handler: async (_input, ctx) => {
      seen.push(ctx);
      return answers.shift() as { n: number };
    },
  });
  const run = () => runOperation(probe, {}, contextOf(t.deps, { caller: localCaller }));

  it('checks every new answer: a wrong shape fails after a good one, frozen or not', async () => {
    const good = freezeDeep({ n: 1 });
    answers.push(good, good, freezeDeep({ n: 'one' }), { n: 1 }, { n: 'one' }, { n: 2, extra: true });
    const first = await run();
    assert.deepEqual(first, { n: 1 });
    assert.equal(await run(), first, 'the same frozen answer: the output checked before');
    await assert.rejects(run(), z.ZodError, 'a new frozen answer of the wrong shape');
    assert.equal(await run(), first, 'an equal answer: the output checked before');
    await assert.rejects(run(), z.ZodError, 'a plain answer of the wrong shape');
    assert.deepEqual(await run(), { n: 2 }, 'the schema still shapes the answer (unknown keys dropped)');
  });

  it('the operation context has no accessor of its own: every request shares one class', async () => {
    seen = [];
    answers.push({ n: 1 }, { n: 1 });
    await run();
    await run();
    const [a, b] = seen as [OperationContext, OperationContext];
    assert.notEqual(a, b);
    assert.equal(Object.getPrototypeOf(a), Object.getPrototypeOf(b));
    for (const ctx of [a, b]) {
      const own = Object.getOwnPropertyDescriptors(ctx);
      const accessors = Object.keys(own).filter((k) => own[k]!.get || own[k]!.set);
      assert.deepEqual(accessors, [], 'no per-request getter or setter');
      assert.ok(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(ctx), 'signal')?.get);
    }
  });
});
