/**
 * The restore guarantee in a container: the service runs as PID 1 (as `node` does in the Docker
 * image), is killed with SIGKILL mid-comparison or while a hold is in force, and is started again
 * as PID 1. Its own pid is in the lock it left, yet the new instance takes the lock over, restores
 * the original plan, and the next set answers 200. Also: a comparison longer than the stale time
 * keeps its lock against another process.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { minimalEnv, type Serving, startServing } from '../../scripts/lib/serve.mjs';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { expireInJournal } from '../holds/journal.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { binPath, readAdminToken, runCli, startServer } from '../support/processes.ts';
import { until } from '../support/until.ts';

const canUnshare =
  process.platform === 'linux' &&
  spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

type Pid1Server = Serving;

/**
 * Signals the service itself (unshare ignores SIGTERM while it waits for its child; SIGKILL of
 * unshare takes the child with it through --kill-child), then waits until the namespace is gone.
 */
const stop = async (server: Pid1Server, signal: NodeJS.Signals): Promise<void> => {
  const pid = server.child.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
  process.kill(Number(children[0]), signal);
  await server.exited;
};

/** Every wrapper started, so that a failed test leaves no service behind. */
const started: ChildProcess[] = [];

/** `powerplan serve` as PID 1 of a new pid namespace; SIGKILL of the wrapper kills it (--kill-child). */
const startAsPid1 = async (env: Record<string, string>): Promise<Pid1Server> => {
  const server = await startServing(
    'unshare',
    ['--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, binPath, 'serve'],
    { env: { ...minimalEnv(), POWERPLAN_PORT: '0', ...env } },
  );
  started.push(server.child);
  return server;
};

/** A request as an administrator of the host: with the credential the service left in `stateDir`. */
const json = (stateDir: string, method: string, body: unknown) => ({
  method,
  headers: { 'content-type': 'application/json', authorization: `Bearer ${readAdminToken(stateDir)}` },
  body: JSON.stringify(body),
});

describe('restart as PID 1 after SIGKILL', { skip: !canUnshare && 'needs Linux and unshare (root)' }, () => {
  let t: TestDeps;
  before(async () => {
    t = await testDeps();
  });
  after(async () => {
    for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await t.cleanup();
  });
  const active = async () => (await t.deps.backend.getActive()).plan?.id;
  const lockPath = () => join(t.dir, 'plan.lock');

  it('mid-comparison: the lock left by pid 1 is taken over, the original plan restored, the next set answers 200', async () => {
    const first = await startAsPid1(t.env);
    void fetch(
      `${first.url}/v1/comparisons`,
      json(t.dir, 'POST', { settleMs: 60_000, threads: 1, idleGapsMs: [20], force: true }),
    ).catch(() => undefined);
    await until(
      'the comparison switched to High performance',
      async () => (await active()) === SCHEME.highPerformance,
      60_000,
    );
    const lock = JSON.parse(readFileSync(lockPath(), 'utf8')) as { pid: number; what: string };
    assert.equal(lock.pid, 1, 'the service runs as pid 1 and holds the plan lock');
    assert.match(lock.what, /compare_power_plans/);
    await stop(first, 'SIGKILL');
    assert.equal(await active(), SCHEME.highPerformance, 'nothing ran after the kill');
    assert.ok(existsSync(lockPath()) && existsSync(join(t.dir, 'restore-journal.json')));

    const second = await startAsPid1(t.env);
    try {
      assert.equal(await active(), SCHEME.balanced, 'restored before listening');
      assert.equal(existsSync(join(t.dir, 'restore-journal.json')), false);
      const set = await fetch(
        `${second.url}/v1/plans/active`,
        json(t.dir, 'PUT', { plan: 'high-performance' }),
      );
      assert.equal(set.status, 200, await set.text());
      assert.equal(await active(), SCHEME.highPerformance);
    } finally {
      await stop(second, 'SIGTERM');
    }
    await t.deps.backend.setActive(SCHEME.balanced);
  });

  it('during a hold: killed, the hold ends while down, restarted as pid 1 it restores and the next set answers 200', async () => {
    const first = await startAsPid1(t.env);
    const held = await fetch(
      `${first.url}/v1/holds`,
      json(t.dir, 'POST', { plan: 'high-performance', for: '10m' }),
    );
    const body = await held.text();
    assert.equal(held.status, 201, body);
    const { hold } = JSON.parse(body) as { hold: { id: string } };
    assert.equal(await active(), SCHEME.highPerformance);
    await stop(first, 'SIGKILL');
    // Killed in the middle of changing the plan: its lock, naming pid 1, stays behind.
    await writeFile(
      lockPath(),
      JSON.stringify({
        pid: 1,
        start: null,
        instance: 'killed',
        token: 't',
        startedAt: new Date().toISOString(),
        what: 'hold expiry',
      }),
    );
    await expireInJournal(t.deps.store, hold.id);

    const second = await startAsPid1(t.env);
    try {
      assert.equal(await active(), SCHEME.balanced, 'the plan from before the hold is back');
      const set = await fetch(`${second.url}/v1/plans/active`, json(t.dir, 'PUT', { plan: 'power-saver' }));
      assert.equal(set.status, 200, await set.text());
    } finally {
      await stop(second, 'SIGTERM');
    }
    await t.deps.backend.setActive(SCHEME.balanced);
  });
});

describe('a comparison longer than the stale time keeps its lock', () => {
  const t = depsPerBlock({ POWERPLAN_LOCK_STALE_SECONDS: '1' });

  it('another process cannot take the plan lock while the comparison runs, seconds past the stale time', async () => {
    const server = await startServer(t.env);
    try {
      void fetch(
        `${server.url}/v1/comparisons`,
        json(t.dir, 'POST', { settleMs: 30_000, threads: 1, idleGapsMs: [20], force: true }),
      ).catch(() => undefined);
      await until(
        'the comparison switched',
        async () => (await t.deps.backend.getActive()).plan?.id === SCHEME.highPerformance,
        60_000,
      );
      const lock = JSON.parse(readFileSync(join(t.dir, 'plan.lock'), 'utf8')) as { startedAt: string };
      await until(
        'three stale times have passed since the lock was taken',
        async () => Date.now() - Date.parse(lock.startedAt) > 3_000,
      );
      const set = await runCli(['set', 'balanced'], t.env);
      assert.equal(set.code, 1, set.stdout + set.stderr);
      assert.match(set.stderr, /being changed by powerplan compare/);
      assert.equal((await t.deps.backend.getActive()).plan?.id, SCHEME.highPerformance);
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
    assert.equal((await t.deps.backend.getActive()).plan?.id, SCHEME.balanced, 'restored at shutdown');
  });
});
