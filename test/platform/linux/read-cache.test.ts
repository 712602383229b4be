/**
 * Linux reads are shared and briefly cached like Windows': 40 concurrent reads of the active plan
 * on a tuned or power-profiles-daemon host start at most 4 tool runs, at most 2 at once (counted
 * from the stand-ins' own log of their runs), and a change clears the cache so the next read sees it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { build, maxOverlap, type Setup } from './harness.ts';

const tuned: NonNullable<Setup['tuned']> = {
  active: 'balanced',
  profiles: ['balanced', 'throughput-performance', 'powersave'].map((name) => ({ name })),
  // A slow daemon, so that runs which are not shared would overlap.
  delayMs: 150,
};
const ppd: NonNullable<Setup['ppd']> = {
  format: 'new',
  active: 'balanced',
  profiles: ['performance', 'balanced', 'power-saver'].map((name) => ({ name, cpuDriver: 'intel_pstate' })),
  delayMs: 150,
};

for (const [owner, setup, tool, target] of [
  ['tuned', { tuned }, 'tuned-adm', 'powersave'],
  ['power-profiles-daemon', { ppd }, 'powerprofilesctl', 'power-saver'],
] as const) {
  describe(`linux ${owner}: shared and cached reads`, () => {
    it('40 concurrent reads of the active plan start at most 4 tool runs, at most 2 at once', async () => {
      const b = await build(setup);
      try {
        const answers = await Promise.all(Array.from({ length: 40 }, () => b.backend.getActive()));
        assert.ok(answers.every((a) => a.plan?.id === 'balanced' && a.owner === owner));
        const runs = (await b.runs()).filter((r) => r.tool === tool);
        assert.ok(runs.length >= 1 && runs.length <= 4, `${runs.length} runs: ${JSON.stringify(runs)}`);
        assert.ok(maxOverlap(runs) <= 2, `${maxOverlap(runs)} runs at once`);
        // Reads right after are answered from the cache.
        await Promise.all([b.backend.getActive(), b.backend.listPlans(), b.backend.capabilities()]);
        assert.equal((await b.runs()).filter((r) => r.tool === tool).length, runs.length);
      } finally {
        await b.cleanup();
      }
    });

    it('a change clears the cache: the next read asks the daemon and sees the new plan', async () => {
      const b = await build(setup);
      try {
        assert.equal((await b.backend.getActive()).plan?.id, 'balanced');
        const before = (await b.runs()).length;
        await b.backend.setActive(target);
        const afterSet = (await b.runs()).length;
        assert.ok(afterSet > before, 'the switch ran the tool');
        assert.equal((await b.backend.getActive()).plan?.id, target);
        assert.ok((await b.runs()).length > afterSet, 'the read after the change ran the tool again');
      } finally {
        await b.cleanup();
      }
    });

    it('a failed change clears the cache too', async () => {
      const b = await build(setup);
      try {
        await b.backend.getActive();
        const before = (await b.runs()).length;
        await assert.rejects(b.backend.setActive('no-such-plan'), /not one this system can switch to/);
        await b.backend.getActive();
        assert.ok((await b.runs()).length > before);
      } finally {
        await b.cleanup();
      }
    });
  });
}

describe('maxOverlap', () => {
  it('counts runs under way at the same moment; touching runs do not overlap', () => {
    const run = (start: number, end: number) => ({ tool: 't', args: [], start, end });
    assert.equal(maxOverlap([]), 0);
    assert.equal(maxOverlap([run(0, 10), run(10, 20)]), 1);
    assert.equal(maxOverlap([run(0, 10), run(5, 20), run(6, 7)]), 3);
  });
});
