/**
 * Holds on the simulated backend and on the Windows backend over the powercfg emulator: switch and
 * expire back, overlapping holds, early release, a set during a hold, restart and crash recovery.
 * Expiry is awaited by polling with a deadline; the shortest hold (1 s) keeps the suite fast.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { Deps } from '../../src/deps.ts';
import { AuditRecord } from '../../src/domain/audit.ts';
import type { HoldList, HoldResult, ReleaseResult } from '../../src/domain/holds.ts';
import type { SetPlanResult } from '../../src/domain/schemas.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { call } from '../support/call.ts';
import { isCode } from '../support/errors.ts';
import { until } from '../support/until.ts';
import { expireInJournal } from './journal.ts';
import { type Rig, rigs } from './rig.ts';

const auditOf = async (deps: Deps) =>
  (await deps.store.readLines('audit.jsonl')).map((l) => AuditRecord.parse(l));

const hold = (deps: Deps, input: Record<string, unknown>) => call<HoldResult>(deps, 'hold_power_plan', input);
const holds = (deps: Deps) => call<HoldList>(deps, 'list_holds');
const release = (deps: Deps, id: string) => call<ReleaseResult>(deps, 'release_power_plan', { id });

for (const [name, makeRig] of rigs) {
  describe(`holds on the ${name}`, () => {
    let rig: Rig;
    before(async () => {
      rig = await makeRig();
    });
    after(() => rig.cleanup());
    // A failed test must not leave a hold behind for the next one.
    afterEach(() => call(rig.deps, 'set_power_plan', { plan: 'balanced', force: true }));

    // Restored: the plan from before is in force and the restore has finished (its journal gone,
    // which happens after its audit record).
    const restoredToBalanced = () =>
      until(
        'the plan from before the hold to be restored',
        async () =>
          (await rig.activeId()) === SCHEME.balanced && (await rig.deps.planChange.journal()) === undefined,
      );

    it('switches to the held plan and switches back when the hold expires', async () => {
      const timer = rig.deps.holds;
      timer.start();
      try {
        const r = await hold(rig.deps, {
          plan: 'high-performance',
          durationSeconds: 1,
          reason: 'nightly restore',
        });
        assert.equal(r.changed, true);
        assert.equal(r.before.id, SCHEME.balanced);
        assert.equal(r.after.id, SCHEME.highPerformance);
        assert.equal(r.restorePlanId, SCHEME.balanced);
        assert.equal(r.hold.reason, 'nightly restore');
        assert.ok(Date.parse(r.hold.expiresAt) > Date.parse(r.hold.createdAt));
        await restoredToBalanced();
        assert.deepEqual((await holds(rig.deps)).holds, []);
        const records = await auditOf(rig.deps);
        assert.ok(records.some((a) => a.operation === 'hold_power_plan' && a.result === 'changed'));
        assert.ok(records.some((a) => a.operation === 'hold_restore' && a.result === 'restored'));
      } finally {
        timer.stop();
      }
    });

    it('restores only after both of two overlapping holds have ended', async () => {
      const timer = rig.deps.holds;
      timer.start();
      try {
        const long = await hold(rig.deps, { plan: 'high-performance', for: '10m' });
        const short = await hold(rig.deps, { plan: SCHEME.highPerformance, durationSeconds: 1 });
        assert.equal(short.changed, false, 'the second hold finds its plan in force');
        assert.equal(
          short.restorePlanId,
          SCHEME.balanced,
          'the restore target stays the plan before the first',
        );
        const left = await until('the short hold to expire', async () => {
          const l = await holds(rig.deps);
          return l.holds.length === 1 ? l : undefined;
        });
        assert.equal(left.holds[0]!.id, long.hold.id);
        assert.ok(!left.holds.some((h) => h.id === short.hold.id));
        assert.equal(await rig.activeId(), SCHEME.highPerformance, 'one hold still keeps the plan');
        const r = await release(rig.deps, long.hold.id);
        assert.equal(r.restored, true);
        assert.equal(r.restoredPlan?.id, SCHEME.balanced);
        assert.equal(await rig.activeId(), SCHEME.balanced);
      } finally {
        timer.stop();
      }
    });

    it('refuses a hold for another plan while holds are in force (409)', async () => {
      const h = await hold(rig.deps, { plan: 'high-performance', for: '10m' });
      await assert.rejects(
        hold(rig.deps, { plan: 'power-saver', for: '5m' }),
        isCode('conflict', /is held until/),
      );
      assert.equal(await rig.activeId(), SCHEME.highPerformance);
      await release(rig.deps, h.hold.id);
      assert.equal(await rig.activeId(), SCHEME.balanced);
    });

    it('releases early and restores at once; a second release is not found', async () => {
      const h = await hold(rig.deps, { plan: 'power-saver', for: '2h' });
      assert.equal(await rig.activeId(), SCHEME.powerSaver);
      const listed = await holds(rig.deps);
      assert.equal(listed.heldPlanId, SCHEME.powerSaver);
      assert.equal(listed.restorePlanId, SCHEME.balanced);
      assert.ok(listed.holds[0]!.secondsRemaining > 7000);
      const r = await release(rig.deps, h.hold.id);
      assert.equal(r.restored, true);
      assert.deepEqual(r.remaining, []);
      assert.equal(await rig.activeId(), SCHEME.balanced);
      await assert.rejects(release(rig.deps, h.hold.id), isCode('not_found'));
      assert.equal((await holds(rig.deps)).restorePlanId, null);
    });

    it('refuses set_power_plan during a hold (409) unless force, which ends the holds', async () => {
      const h = await hold(rig.deps, { plan: 'high-performance', for: '1h' });
      await assert.rejects(
        call(rig.deps, 'set_power_plan', { plan: 'power-saver' }),
        isCode('conflict', /force/),
      );
      await assert.rejects(
        call(rig.deps, 'set_power_plan', { plan: 'power-saver', dryRun: true }),
        isCode('conflict'),
      );
      const same = await call<SetPlanResult>(rig.deps, 'set_power_plan', { plan: 'high-performance' });
      assert.equal(same.changed, false);
      assert.match(same.warnings?.join(' ') ?? '', /held/);
      assert.equal((await holds(rig.deps)).holds.length, 1, 'a set that changes nothing keeps the holds');
      assert.equal(await rig.activeId(), SCHEME.highPerformance);

      const forced = await call<SetPlanResult>(rig.deps, 'set_power_plan', {
        plan: 'power-saver',
        force: true,
      });
      assert.equal(forced.changed, true);
      assert.match(forced.warnings?.join(' ') ?? '', new RegExp(`Ended hold ${h.hold.id}`));
      assert.equal(await rig.activeId(), SCHEME.powerSaver);
      const after = await holds(rig.deps);
      assert.deepEqual(after.holds, []);
      assert.equal(after.restorePending, false, 'nothing is restored after a forced set');
      const records = await auditOf(rig.deps);
      assert.ok(
        records.some(
          (a) =>
            a.operation === 'release_power_plan' &&
            (a.input as { forcedBy?: string }).forcedBy === 'set_power_plan' &&
            (a.input as { id?: string }).id === h.hold.id,
        ),
      );
      await call(rig.deps, 'set_power_plan', { plan: 'balanced' });
    });

    it('keeps a hold across a restart and still ends it', async () => {
      const h = await hold(rig.deps, { plan: 'high-performance', for: '10m' });
      // The first instance goes away without ending anything; a new one starts on the same state.
      const next = await rig.restart();
      try {
        await next.planChange.recover();
        const listed = await holds(next);
        assert.deepEqual(
          listed.holds.map((x) => x.id),
          [h.hold.id],
        );
        assert.equal(await rig.activeId(), SCHEME.highPerformance);
        next.holds.start();
        await expireInJournal(next.store, h.hold.id, Date.now() + 500);
        await restoredToBalanced();
        assert.deepEqual((await holds(next)).holds, []);
      } finally {
        next.shutdown.abort();
      }
    });

    it('restores at start-up when the hold expired while the service was down', async () => {
      const h = await hold(rig.deps, { plan: 'high-performance', for: '10m' });
      await expireInJournal(rig.deps.store, h.hold.id);
      assert.equal(await rig.activeId(), SCHEME.highPerformance, 'nothing ran to end it');
      const next = await rig.restart();
      try {
        await next.planChange.recover();
        assert.equal(await rig.activeId(), SCHEME.balanced);
        assert.deepEqual((await holds(next)).holds, []);
      } finally {
        next.shutdown.abort();
      }
    });

    it('re-applies the held plan at start-up after a crash between the journal and the switch', async () => {
      const now = Date.now();
      await rig.deps.store.write('holds.json', {
        version: 1,
        restorePlanId: SCHEME.balanced,
        restorePlanName: 'Balanced',
        holds: [
          {
            id: '00000000-0000-4000-8000-000000000001',
            planId: SCHEME.highPerformance,
            planName: 'High performance',
            createdAt: new Date(now).toISOString(),
            expiresAt: new Date(now + 600_000).toISOString(),
            createdBy: 'local',
          },
        ],
      });
      assert.equal(await rig.activeId(), SCHEME.balanced);
      const next = await rig.restart();
      try {
        await next.planChange.recover();
        assert.equal(await rig.activeId(), SCHEME.highPerformance);
        await release(next, '00000000-0000-4000-8000-000000000001');
        assert.equal(await rig.activeId(), SCHEME.balanced);
      } finally {
        next.shutdown.abort();
      }
    });
  });
}
