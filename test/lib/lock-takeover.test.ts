/**
 * The lock never blocks a successor and never admits two holders: stale holders (dead, pid reused,
 * this pid in an earlier instance, not refreshed) are taken over; live ones, also past the stale
 * time, are not; two processes racing to take over the same stale locks win each exactly once.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FileLock } from '../../src/lib/file-lock.ts';
import { processStart, thisProcess } from '../../src/lib/process-identity.ts';
import { idleProcessArgs, typescriptLoader } from '../support/commands.ts';

const lockAt = (path: string, extra: Partial<ConstructorParameters<typeof FileLock>[1]> = {}) =>
  new FileLock(path, { code: 'conflict', heldMessage: (h) => `held by ${h.what} (${h.pid})`, ...extra });

const tempDir = () => mkdtemp(join(tmpdir(), 'powerplan-takeover-'));

/** A pid above Linux's largest pid_max (2^22): never a live process. */
const DEAD_PID = 2 ** 22 + 12_345;

describe('lock takeover', () => {
  it('a lock naming this pid but another instance is stale (a restarted container runs as pid 1 again)', async () => {
    const dir = await tempDir();
    const path = join(dir, 'plan.lock');
    await writeFile(
      path,
      JSON.stringify({
        ...thisProcess,
        instance: 'earlier-instance',
        token: 't',
        startedAt: new Date().toISOString(),
        what: 'compare',
      }),
    );
    const release = await lockAt(path).acquire('set');
    assert.equal(JSON.parse(await readFile(path, 'utf8')).instance, thisProcess.instance);
    await release();
    await rm(dir, { recursive: true });
  });

  it('a live pid whose start time differs from the recorded one is a reused pid: stale', {
    skip: process.platform !== 'linux',
  }, async () => {
    const dir = await tempDir();
    const path = join(dir, 'plan.lock');
    const other = spawn(...idleProcessArgs(30));
    try {
      await once(other, 'spawn');
      assert.ok(processStart(other.pid!));
      const record = {
        pid: other.pid,
        instance: 'x',
        token: 't',
        startedAt: new Date().toISOString(),
        what: 'old',
      };
      await writeFile(path, JSON.stringify({ ...record, start: processStart(other.pid!) }));
      await assert.rejects(lockAt(path).acquire('set'), /held by old/);
      await writeFile(path, JSON.stringify({ ...record, start: '1' }));
      const release = await lockAt(path).acquire('set');
      await release();
    } finally {
      other.kill();
      await rm(dir, { recursive: true });
    }
  });

  it('a live holder keeps its lock past the stale time (it refreshes it); a silent one loses it', async () => {
    const dir = await tempDir();
    const path = join(dir, 'plan.lock');
    const staleMs = 300;
    const release = await lockAt(path, { staleMs }).acquire('long comparison');
    // Another process (same rules, another identity) tries after several stale times have passed.
    const contender = lockAt(path, {
      staleMs,
      identity: { pid: DEAD_PID - 1, start: null, instance: 'other' },
    });
    const taken = Date.now();
    while (Date.now() - taken < 4 * staleMs) {
      await assert.rejects(contender.acquire('set'), /held by long comparison/);
      await sleep(50);
    }
    await release();
    // A holder that stopped refreshing (hung, or a reused pid on Windows) is stale after staleMs.
    await writeFile(
      path,
      JSON.stringify({
        ...thisProcess,
        pid: process.ppid,
        start: null,
        token: 't',
        startedAt: new Date().toISOString(),
        what: 'hung',
      }),
    );
    await assert.rejects(contender.acquire('set'), /held by hung/);
    const old = new Date(Date.now() - 2 * staleMs);
    await utimes(path, old, old);
    const r2 = await contender.acquire('set');
    await r2();
    await rm(dir, { recursive: true });
  });

  it('two processes racing to take over 1,000 stale locks: exactly one wins each', async (t) => {
    const dir = await tempDir();
    const rounds = 1000;
    await Promise.all(
      Array.from({ length: rounds }, (_, r) =>
        writeFile(
          join(dir, `round-${r}.lock`),
          JSON.stringify({
            pid: DEAD_PID,
            start: null,
            instance: 'crashed',
            token: `t${r}`,
            startedAt: new Date().toISOString(),
            what: 'crashed',
          }),
        ),
      ),
    );
    const worker = join(import.meta.dirname, 'lock-race-worker.ts');
    const contenders = [0, 1].map(() => {
      const child = spawn(process.execPath, [...typescriptLoader, worker, dir, String(rounds)], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const lines = createInterface({ input: child.stdout! });
      const next = () => new Promise<string>((r) => lines.once('line', r));
      return { child, next };
    });
    try {
      const ready = contenders.map((c) => c.next());
      assert.deepEqual(await Promise.all(ready), ['ready', 'ready']);
      const results = contenders.map((c) => c.next());
      for (const c of contenders) c.child.stdin!.write('go\n');
      const [a, b] = (await Promise.all(results)).map(
        (l) => JSON.parse(l) as { won: number[]; lost: number[] },
      );
      const winners = Array.from(
        { length: rounds },
        (_, r) => Number(a!.won.includes(r)) + Number(b!.won.includes(r)),
      );
      assert.deepEqual(
        winners.map((w, r) => [r, w]).filter(([, w]) => w !== 1),
        [],
        'every round has exactly one winner',
      );
      assert.equal(a!.won.length + b!.won.length, rounds);
      t.diagnostic(`rounds won: ${a!.won.length} and ${b!.won.length}`);
      // No takeover marker is left behind by a finished takeover.
      assert.deepEqual(
        (await readdir(dir)).filter((f) => !/^round-\d+\.lock$/.test(f)),
        [],
      );
    } finally {
      for (const c of contenders) c.child.stdin!.end();
      await Promise.all(
        contenders.map((c) => (c.child.exitCode === null ? once(c.child, 'exit') : undefined)),
      );
      await rm(dir, { recursive: true });
    }
  });
});
