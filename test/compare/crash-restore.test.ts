/**
 * The restore guarantee across process ends, on a real `powerplan serve`: SIGTERM during a
 * comparison restores before the process exits; SIGKILL leaves the journal, and the next start
 * restores the original plan from it before it listens.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ActivePlan } from '../../src/domain/schemas.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { type ServerProcess, startServer } from '../support/processes.ts';
import { until } from '../support/until.ts';

const activeVia = async (server: ServerProcess) =>
  ActivePlan.parse(await (await fetch(`${server.url}/v1/plans/active`)).json()).plan?.id;

/**
 * Starts a comparison whose second plan settles for a minute: long enough to be interrupted. The
 * promise settles with the answer's status and body, or the error that ended the request.
 */
const startComparison = (server: ServerProcess) =>
  fetch(`${server.url}/v1/comparisons`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...server.asAdmin },
    body: JSON.stringify({ settleMs: 60_000, threads: 1, idleGapsMs: [20], force: true }),
  }).then(
    async (r) => `${r.status} ${await r.text()}`,
    (e: unknown) => String(e),
  );

describe('comparison restore across process ends', () => {
  const t = depsPerBlock();

  const journal = () => t.deps.store.path('restore-journal.json');
  const audits = async () =>
    (await t.deps.store.readLines('audit.jsonl')) as { operation: string; caller: string; result: string }[];
  /** A served process mid-comparison: switched to High performance, the restore journaled. */
  const midComparison = async () => {
    const server = await startServer(t.env);
    const request = startComparison(server);
    // The first plan's benchmark runs before the switch: on a loaded machine that takes a while.
    let answered: string | undefined;
    void request.then((a) => {
      answered = a;
    });
    const seen = await until(
      'the comparison switched to High performance',
      async () =>
        answered !== undefined ? 'ended' : (await activeVia(server)) === SCHEME.highPerformance && 'switched',
      150_000,
      200,
    ).catch((e: unknown) => String(e));
    assert.equal(
      seen,
      'switched',
      `${seen}: ${answered ?? ''}\nserver output:\n${server.output().slice(-3000)}`,
    );
    assert.equal(existsSync(journal()), true);
    return { server, request };
  };

  it('SIGTERM mid-comparison: the original plan is restored before the server exits', async () => {
    const { server, request } = await midComparison();
    assert.equal(await server.stop('SIGTERM'), 0);
    await request;
    assert.equal((await t.deps.backend.getActive()).plan?.id, SCHEME.balanced);
    assert.equal(existsSync(journal()), false);
  });

  it('SIGKILL mid-comparison: the next start restores the original plan and removes the journal', async () => {
    const { server: first, request } = await midComparison();
    await first.stop('SIGKILL');
    await request;
    // Nothing ran after the kill: the machine is still on the candidate plan, the journal says what to restore.
    assert.equal((await t.deps.backend.getActive()).plan?.id, SCHEME.highPerformance);
    assert.equal(existsSync(journal()), true);

    const second = await startServer(t.env);
    try {
      assert.equal(await activeVia(second), SCHEME.balanced);
      assert.equal(existsSync(journal()), false);
      const restore = (await audits()).filter((a) => a.operation === 'compare_restore').at(-1);
      assert.equal(restore?.caller, 'service');
      assert.equal(restore?.result, 'restored');
    } finally {
      assert.equal(await second.stop('SIGTERM'), 0);
    }
  });
});
