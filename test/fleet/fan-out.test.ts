/** The fan-out's own rules: the concurrency limit and the short cache. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/log.ts';
import { mapLimited } from '../../src/lib/map-limited.ts';
import { FleetService } from '../../src/services/fleet/fleet.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { type FleetRig, fleetRig } from './rig.ts';

describe('fan-out', () => {
  it('runs at most `limit` tasks at once and keeps the order of the results', async () => {
    let running = 0;
    let peak = 0;
    const release: (() => void)[] = [];
    const done = mapLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((r) => release.push(r));
      running--;
      return n * 10;
    });
    // Release one waiting task at a time until all have run.
    while (release.length || running) {
      await new Promise((r) => setImmediate(r));
      assert.ok(running <= 3, `${running} running`);
      release.shift()?.();
    }
    assert.deepEqual(await done, [10, 20, 30, 40, 50, 60, 70]);
    assert.equal(peak, 3);
  });

  describe('against agents', () => {
    let rig: FleetRig;
    let t: TestDeps;
    before(async () => {
      rig = await fleetRig(1);
      t = await testDeps({ POWERPLAN_FLEET_FILE: rig.fleetFile, POWERPLAN_FLEET_TIMEOUT_MS: '1500' });
    });
    after(async () => {
      await t?.cleanup();
      await rig?.cleanup();
    });

    it('serves a second status within the cache time from the first answer', async () => {
      const fleet = new FleetService(t.deps.config, createLogger('silent'));
      try {
        const first = await fleet.status({ hosts: ['slow'] });
        const hits = rig.slowHits();
        assert.equal(first.hosts[0]?.error?.title, 'Timed out');
        assert.ok(hits >= 1);
        const second = await fleet.status({ hosts: ['slow'] });
        assert.equal(rig.slowHits(), hits, 'the slow host was not asked again');
        assert.equal(second.hosts[0]?.checkedAt, first.hosts[0]?.checkedAt);
      } finally {
        fleet.close();
      }
    });
  });
});
