import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PowerPlanError } from '../../src/domain/errors.ts';
import { FileLock } from '../../src/lib/file-lock.ts';
import { Lock } from '../../src/lib/lock.ts';
import { createToken, readTokenFile } from '../../src/lib/tokens.ts';
import { idleProcessArgs } from '../support/commands.ts';
import { testDeps } from '../support/deps.ts';
import { runCli } from '../support/processes.ts';
import { until } from '../support/until.ts';

const fileLock = (path: string) =>
  new FileLock(path, { code: 'conflict', heldMessage: (h) => `held by ${h.what} (${h.pid})` });

describe('plan lock across processes', () => {
  it('a second lock over the same file waits, then answers conflict naming the holder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-lock-'));
    const path = join(dir, 'plan.lock');
    const a = new Lock('The power plan', fileLock(path));
    const b = new Lock('The power plan', fileLock(path));
    let release!: () => void;
    let held = false;
    const holding = a.run(
      'compare',
      () =>
        new Promise<void>((r) => {
          held = true;
          release = r;
        }),
    );
    await until('the first lock to be held', () => held);
    await assert.rejects(
      b.run('set', async () => 'never', 300),
      (e: unknown) => {
        assert.ok(e instanceof PowerPlanError);
        assert.equal(e.code, 'conflict');
        assert.match(e.message, /held by compare/);
        return true;
      },
    );
    release();
    await holding;
    assert.equal(await b.run('set', async () => 'ran', 300), 'ran');
    await rm(dir, { recursive: true });
  });

  it('a lock file left by a dead process is taken over', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-lock-'));
    const path = join(dir, 'plan.lock');
    await writeFile(
      path,
      JSON.stringify({ pid: 2 ** 22 + 12345, startedAt: new Date().toISOString(), what: 'crashed' }),
    );
    const lock = new Lock('The power plan', fileLock(path));
    assert.equal(await lock.run('set', async () => 'ran', 300), 'ran');
    await rm(dir, { recursive: true });
  });

  it('the CLI refuses a set while another live process holds the plan lock, and changes nothing', async () => {
    const t = await testDeps();
    const holder = spawn(...idleProcessArgs(30));
    try {
      await writeFile(
        join(t.dir, 'plan.lock'),
        JSON.stringify({
          pid: holder.pid,
          startedAt: new Date().toISOString(),
          what: 'compare_power_plans (local)',
        }),
      );
      const r = await runCli(['set', 'high-performance'], t.env);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /being changed by powerplan compare/);
      const active = JSON.parse((await runCli(['active', '--json'], t.env)).stdout);
      assert.equal(active.plan.kind, 'balanced');
    } finally {
      holder.kill();
      await t.cleanup();
    }
  });

  it('concurrent token creations all keep their entry (the token file is changed under its lock file)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-lock-'));
    const path = join(dir, 'tokens.json');
    const names = Array.from({ length: 10 }, (_, i) => `host-${i}`);
    await Promise.all(names.map((n) => createToken(path, n, ['read'])));
    assert.deepEqual((await readTokenFile(path)).tokens.map((t) => t.name).sort(), names.sort());
    await rm(dir, { recursive: true });
  });
});
