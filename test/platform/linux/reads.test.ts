/**
 * Linux reads start no program: the active plan, the plan list and the capabilities of a tuned or
 * power-profiles-daemon host come from tuned's files and the daemon's D-Bus properties (counted
 * from the stand-ins' own logs and calls), a change by another tool is seen at the next read, and a
 * daemon that stops or starts is noticed without a program either.
 */
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startFakePpd } from '../../support/fake-ppd.ts';
import { until } from '../../support/until.ts';
import { build, maxOverlap, type Setup, TUNED_PID } from './harness.ts';

const tuned: NonNullable<Setup['tuned']> = {
  active: 'balanced',
  profiles: ['balanced', 'throughput-performance', 'powersave'].map((name) => ({ name })),
};
const ppd: NonNullable<Setup['ppd']> = {
  format: 'new',
  active: 'balanced',
  profiles: ['performance', 'balanced', 'power-saver'].map((name) => ({ name, cpuDriver: 'intel_pstate' })),
};

const reads = async (b: Awaited<ReturnType<typeof build>>) => {
  const [active] = await Promise.all([
    Promise.all(Array.from({ length: 40 }, () => b.backend.getActive())),
    b.backend.listPlans(),
    b.backend.capabilities(),
  ]);
  return active;
};

describe('linux reads start no program', () => {
  it('tuned: 40 concurrent reads of the active plan, the list and the capabilities run no tuned-adm', async () => {
    const b = await build({ tuned, ppd });
    try {
      const [first] = await reads(b);
      assert.equal(first?.owner, 'tuned');
      assert.equal(first?.plan?.id, 'balanced');
      assert.deepEqual(await b.runs(), []);
    } finally {
      await b.cleanup();
    }
  });

  it('power-profiles-daemon: 42 concurrent reads make one GetAll and run no powerprofilesctl', async () => {
    const b = await build({ ppd });
    try {
      const [first] = await reads(b);
      assert.equal(first?.owner, 'power-profiles-daemon');
      assert.equal(first?.plan?.id, 'balanced');
      await reads(b);
      assert.equal(b.ppd?.reads(), 1, 'the properties are kept until the daemon signals a change');
      assert.deepEqual(await b.runs(), []);
    } finally {
      await b.cleanup();
    }
  });
});

describe('linux reads see every change', () => {
  it("tuned: a profile switched by another tool (tuned's active_profile) is seen at the next read", async () => {
    const b = await build({ tuned });
    try {
      assert.equal((await b.backend.getActive()).plan?.id, 'balanced');
      await writeFile(join(b.dir, 'etc', 'tuned', 'active_profile'), 'powersave\n');
      assert.equal((await b.backend.getActive()).plan?.id, 'powersave');
      // A profile added by the administrator is listed at the next read too.
      await writeFile(join(b.dir, 'etc', 'tuned', 'active_profile'), 'balanced\n');
      await mkdir(join(b.dir, 'etc', 'tuned', 'my-db'));
      await writeFile(join(b.dir, 'etc', 'tuned', 'my-db', 'tuned.conf'), '[main]\nsummary=Our database\n');
      const mine = (await b.backend.listPlans()).find((p) => p.id === 'my-db');
      assert.equal(mine?.description, 'Our database');
    } finally {
      await b.cleanup();
    }
  });

  it('tuned: a stopped daemon (its pid gone from /proc) is no longer the owner, and back when it runs', async () => {
    const b = await build({ tuned, ppd: { ...ppd, daemon: 'stopped' } });
    try {
      assert.equal((await b.backend.getActive()).owner, 'tuned');
      const proc = join(b.dir, 'proc', String(TUNED_PID));
      const cmdline = join(proc, 'cmdline');
      // A reused pid: some other program runs under it now.
      await writeFile(cmdline, '/usr/bin/sleep\0infinity\0');
      const stopped = await b.backend.getActive();
      assert.notEqual(stopped.owner, 'tuned');
      assert.ok(
        stopped.notes?.some((n) => n.code === 'owner-inactive' && /daemon is not running/.test(n.text)),
      );
      await rm(proc, { recursive: true });
      assert.notEqual((await b.backend.getActive()).owner, 'tuned');
      await mkdir(proc);
      await writeFile(cmdline, '/usr/bin/python3\0/usr/sbin/tuned\0');
      assert.equal((await b.backend.getActive()).owner, 'tuned');
    } finally {
      await b.cleanup();
    }
  });

  it('power-profiles-daemon: a change by another tool is signalled and seen; its own change at once', async () => {
    const b = await build({ ppd });
    try {
      assert.equal((await b.backend.getActive()).plan?.id, 'balanced');
      const state = join(b.dir, 'powerprofilesctl.json');
      await writeFile(state, JSON.stringify({ ...ppd, active: 'power-saver' }));
      b.ppd!.changed();
      await until(
        'the signalled change',
        async () => (await b.backend.getActive()).plan?.id === 'power-saver',
      );
      await b.backend.setActive('performance');
      assert.equal((await b.backend.getActive()).plan?.id, 'performance', 'read right after its own change');
    } finally {
      await b.cleanup();
    }
  });

  it('power-profiles-daemon: a daemon that starts later is seen (NameOwnerChanged), one that stops too', async () => {
    const b = await build({ ppd: { ...ppd, daemon: 'stopped' } });
    try {
      const before = await b.backend.getActive();
      assert.notEqual(before.owner, 'power-profiles-daemon');
      assert.ok(before.notes?.some((n) => n.code === 'owner-inactive' && /no process owns/.test(n.text)));
      const fake = await startFakePpd(join(b.dir, 'bus'), join(b.dir, 'powerprofilesctl.json'));
      try {
        await until(
          'the daemon seen',
          async () => (await b.backend.getActive()).owner === 'power-profiles-daemon',
        );
      } finally {
        fake.stop();
      }
      await until(
        'the daemon gone',
        async () => (await b.backend.getActive()).owner !== 'power-profiles-daemon',
      );
      assert.deepEqual(
        (await b.runs()).filter((r) => r.tool === 'powerprofilesctl'),
        [],
      );
    } finally {
      await b.cleanup();
    }
  });
});

describe('maxOverlap', () => {
  it('counts runs under way at the same moment; touching runs do not overlap', () => {
    const run = (start: number, end: number) => ({ tool: 't', args: [], start, end });
    assert.equal(maxOverlap([]), 0);
    assert.equal(maxOverlap([run(0, 10), run(10, 20)]), 1);
    assert.equal(maxOverlap([run(0, 10), run(5, 20), run(6, 7)]), 3);
  });
});
