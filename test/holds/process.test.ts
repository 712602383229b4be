/**
 * Holds and desired state through real processes: `powerplan serve` restarted (SIGTERM) and killed
 * (SIGKILL) while a hold is in force, the CLI commands, and the server's timers acting on holds and
 * drift made by another process.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { AuditRecord } from '../../src/domain/audit.ts';
import type { DesiredState } from '../../src/domain/desired.ts';
import type { HoldList, HoldResult } from '../../src/domain/holds.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { runCli, type ServerProcess, startServer } from '../support/processes.ts';
import { until } from '../support/until.ts';
import { expireInJournal } from './journal.ts';

const get = async <T>(s: ServerProcess, path: string): Promise<T> => {
  const res = await fetch(`${s.url}${path}`);
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return (await res.json()) as T;
};

const activeOf = async (s: ServerProcess) =>
  (await get<{ plan: { id: string } }>(s, '/v1/plans/active')).plan.id;

const postHold = async (s: ServerProcess, body: unknown): Promise<HoldResult> => {
  const res = await fetch(`${s.url}/v1/holds`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...s.asAdmin },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()) as HoldResult;
};

describe('holds across restarts of powerplan serve', () => {
  const t = depsPerBlock();
  const servers: ServerProcess[] = [];
  const serve = async (env = {}) => {
    const s = await startServer({ ...t.env, ...env });
    servers.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop('SIGKILL');
  });

  it('keeps a hold through a restart and still ends it', async () => {
    const first = await serve();
    const h = await postHold(first, { plan: 'high-performance', durationSeconds: 600, reason: 'restore' });
    assert.equal(await activeOf(first), SCHEME.highPerformance);
    assert.equal(await first.stop('SIGTERM'), 0);

    const second = await serve();
    const listed = await get<HoldList>(second, '/v1/holds');
    assert.deepEqual(
      listed.holds.map((x) => x.id),
      [h.hold.id],
      'the hold is still in force after the restart',
    );
    assert.equal(await activeOf(second), SCHEME.highPerformance);
    // Time passes: the expiry is moved to a second from now, and the new server's timer must act on it.
    await expireInJournal(t.deps.store, h.hold.id, Date.now() + 1000);
    await until('the restore after expiry', async () => (await activeOf(second)) === SCHEME.balanced, 30_000);
    assert.deepEqual((await get<HoldList>(second, '/v1/holds')).holds, []);
  });

  it('restores the original plan at start-up after a SIGKILL and the expiry', async () => {
    const first = await serve();
    const h = await postHold(first, { plan: 'high-performance', durationSeconds: 600 });
    await first.stop('SIGKILL');
    // The service stays down past the expiry.
    await expireInJournal(t.deps.store, h.hold.id);
    const stale = await runCli(['active', '--json'], t.env);
    assert.equal(JSON.parse(stale.stdout).plan.id, SCHEME.highPerformance, 'nothing ended the hold');

    const second = await serve();
    // Recovery runs before the server listens: the first answer already has the plan restored.
    assert.equal(await activeOf(second), SCHEME.balanced);
    const records = (await t.deps.store.readLines('audit.jsonl')).map((l) => AuditRecord.parse(l));
    const restore = records.find((a) => a.operation === 'hold_restore');
    assert.equal(restore?.result, 'restored');
    assert.equal(restore?.caller, 'service');
  });

  it('ends a hold taken by the CLI while the server runs', async () => {
    const server = await serve();
    const r = await runCli(['hold', 'high-performance', '--for', '1s', '--json'], t.env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as HoldResult).after.id, SCHEME.highPerformance);
    await until(
      'the server to end the hold',
      async () => (await activeOf(server)) === SCHEME.balanced,
      30_000,
    );
  });

  it('sets a drifted plan back when POWERPLAN_ENFORCE=true', async () => {
    const env = {
      POWERPLAN_DESIRED_PLAN: 'high-performance',
      POWERPLAN_ENFORCE: 'true',
      POWERPLAN_DESIRED_INTERVAL: '1',
    };
    const server = await serve(env);
    await until(
      'the first correction',
      async () => (await get<DesiredState>(server, '/v1/desired')).correctedTotal === 1,
    );
    const set = await runCli(['set', 'power-saver'], t.env);
    assert.equal(set.code, 0, set.stderr);
    await until(
      'the second correction',
      async () => (await get<DesiredState>(server, '/v1/desired')).correctedTotal === 2,
    );
    assert.equal(await activeOf(server), SCHEME.highPerformance);
    const d = await get<DesiredState>(server, '/v1/desired');
    assert.equal(d.source, 'config');
    assert.equal(d.driftTotal, 2);
    await runCli(['set', 'balanced'], t.env);
  });
});

describe('hold commands of the CLI', () => {
  const t = depsPerBlock();

  it('hold, holds, a refused set, release', async () => {
    const held = await runCli(
      ['hold', 'high-performance', '--for', '2h', '--reason', 'month-end batch'],
      t.env,
    );
    assert.equal(held.code, 0, held.stderr);
    const id = /Hold id: (\S+)/.exec(held.stdout)?.[1];
    assert.ok(id, held.stdout);
    assert.match(held.stdout, /Switched to High performance/);

    const list = await runCli(['holds', '--json'], t.env);
    const parsed = JSON.parse(list.stdout) as HoldList;
    assert.equal(parsed.holds[0]?.id, id);
    assert.equal(parsed.holds[0]?.reason, 'month-end batch');
    assert.ok(parsed.holds[0]!.secondsRemaining > 7000);

    const set = await runCli(['set', 'balanced'], t.env);
    assert.equal(set.code, 1);
    assert.match(set.stderr, /held.*--force/s);

    const released = await runCli(['release', id], t.env);
    assert.equal(released.code, 0, released.stderr);
    assert.match(released.stdout, /Restored Balanced/);
    assert.equal(JSON.parse((await runCli(['active', '--json'], t.env)).stdout).plan.id, SCHEME.balanced);
  });

  it('rejects a malformed duration with exit code 1', async () => {
    const r = await runCli(['hold', 'high-performance', '--for', '2 hours'], t.env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /for: must be a duration like 90s, 45m, 2h/);
  });

  it('desired set, desired, and none to clear', async () => {
    const set = await runCli(['desired', 'set', 'power-saver', '--json'], t.env);
    assert.equal(set.code, 0, set.stderr);
    const d = JSON.parse(set.stdout) as DesiredState;
    assert.equal(d.planId, SCHEME.powerSaver);
    assert.equal(d.status, 'drift');
    assert.equal(d.checkerRunning, false);
    const shown = await runCli(['desired'], t.env);
    assert.match(shown.stdout, /Status\s+drift/);
    const cleared = await runCli(['desired', 'set', 'none'], t.env);
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.match(cleared.stdout, /No desired plan/);
  });
});
