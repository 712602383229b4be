/**
 * Desired state on the simulated backend and on the Windows backend over the powercfg emulator:
 * drift is detected within one interval and counted once, corrected only when enforcing, reported
 * but not fought where group policy owns the plan, and never fought while a hold is in force.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { buildDeps, type Deps } from '../../src/deps.ts';
import { AuditRecord } from '../../src/domain/audit.ts';
import type { DesiredState } from '../../src/domain/desired.ts';
import { PowerPlanError } from '../../src/domain/errors.ts';
import type { HoldResult } from '../../src/domain/holds.ts';
import type { ActivePlan, Capabilities } from '../../src/domain/schemas.ts';
import type { PowerBackend } from '../../src/platform/backend.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { call } from '../support/call.ts';
import { testDeps } from '../support/deps.ts';
import { until } from '../support/until.ts';
import { type Rig, rigs } from './rig.ts';

const auditOf = async (deps: Deps) =>
  (await deps.store.readLines('audit.jsonl')).map((l) => AuditRecord.parse(l));

const desired = (deps: Deps) => call<DesiredState>(deps, 'get_desired_state');

/** Waits until the checker has completed `n` more checks than now. */
const moreChecks = async (deps: Deps, n: number) => {
  const target = deps.desired.checks + n;
  await until(`${n} more desired-state checks`, async () => deps.desired.checks >= target);
};

for (const [name, makeRig] of rigs) {
  /** A rig whose desired plan is enforced, checked every second. */
  const enforcing = (plan: string) =>
    makeRig({ POWERPLAN_DESIRED_PLAN: plan, POWERPLAN_ENFORCE: 'true', POWERPLAN_DESIRED_INTERVAL: '1' });

  describe(`desired state on the ${name}`, () => {
    let rig: Rig | undefined;
    afterEach(async () => {
      await rig?.cleanup();
      rig = undefined;
    });

    it('detects drift within one interval, counts it once and does not correct it without enforce', async () => {
      rig = await makeRig({ POWERPLAN_DESIRED_PLAN: 'high-performance', POWERPLAN_DESIRED_INTERVAL: '1' });
      const { deps } = rig;
      deps.desired.start();
      const first = await until('the first drift', async () => {
        const d = await desired(deps);
        return d.driftTotal === 1 ? d : undefined;
      });
      assert.equal(first.source, 'config');
      assert.equal(first.planId, SCHEME.highPerformance);
      assert.equal(first.status, 'drift');
      assert.equal(first.enforce, false);
      assert.equal(first.checkerRunning, true);
      const active = await call<ActivePlan>(deps, 'get_active_power_plan');
      assert.equal(active.desired?.planId, SCHEME.highPerformance);
      assert.equal(active.desired?.inDesiredState, false);
      assert.equal(active.desired?.status, 'drift');
      assert.ok(active.desired?.lastCheck);

      await moreChecks(deps, 2);
      assert.equal(await rig.activeId(), SCHEME.balanced, 'not corrected without enforce');
      assert.equal((await desired(deps)).driftTotal, 1, 'one drift, counted once');
      const detected = (await auditOf(deps)).filter((a) => a.operation === 'desired_state_check');
      assert.equal(detected.length, 1);
      assert.equal(detected[0]!.result, 'detected');
      assert.ok(!(await auditOf(deps)).some((a) => a.operation === 'enforce_desired_state'));

      await rig.changeBehindBack(SCHEME.highPerformance);
      await until('the desired state', async () => (await desired(deps)).inDesiredState === true);
      await moreChecks(deps, 1);
      const before = deps.desired.checks;
      await rig.changeBehindBack(SCHEME.powerSaver);
      // The checker's own counters, read without a call in between: a slow call under load would
      // let further checks pass before the drift is seen.
      const detectedAt = await until(
        'the second drift',
        () => (deps.desired.driftTotal === 2 ? deps.desired.checks : undefined),
        15_000,
        5,
      );
      // The check under way at the change may have read the old plan; the next one must see it.
      assert.ok(detectedAt <= before + 2, 'detected within one interval');
      assert.equal((await desired(deps)).driftTotal, 2);
      assert.equal(await rig.activeId(), SCHEME.powerSaver);
    });

    it('sets the desired plan back when enforcing', async () => {
      rig = await makeRig({ POWERPLAN_DESIRED_INTERVAL: '1' });
      const { deps } = rig;
      deps.desired.start();
      const set = await call<DesiredState>(deps, 'set_desired_power_plan', {
        plan: 'high-performance',
        enforce: true,
      });
      assert.equal(set.source, 'api');
      assert.equal(set.planId, SCHEME.highPerformance);
      await until('the correction', async () => (await desired(deps)).correctedTotal === 1);
      assert.equal(await rig.activeId(), SCHEME.highPerformance);
      await rig.changeBehindBack(SCHEME.powerSaver);
      await until('the second correction', async () => (await desired(deps)).correctedTotal === 2);
      assert.equal(await rig.activeId(), SCHEME.highPerformance);
      const d = await desired(deps);
      assert.equal(d.driftTotal, 2);
      assert.equal(d.inDesiredState, true);
      const enforced = (await auditOf(deps)).filter((a) => a.operation === 'enforce_desired_state');
      assert.deepEqual(
        enforced.map((a) => a.result),
        ['changed', 'changed'],
      );

      const cleared = await call<DesiredState>(deps, 'set_desired_power_plan', { plan: null });
      assert.equal(cleared.status, 'none');
      assert.equal((await call<ActivePlan>(deps, 'get_active_power_plan')).desired, undefined);
    });

    it('reports drift but does not fight group policy', async () => {
      rig = await enforcing('high-performance');
      const { deps } = rig;
      await rig.pinByPolicy();
      assert.equal((await deps.backend.getActive()).policyManaged, true);
      deps.desired.start();
      const d = await until('the drift report', async () => {
        const x = await desired(deps);
        return x.driftTotal === 1 ? x : undefined;
      });
      assert.equal(d.status, 'policy-managed');
      assert.equal(d.enforce, true);
      await moreChecks(deps, 2);
      assert.equal(await rig.activeId(), SCHEME.balanced, 'not fought');
      const records = await auditOf(deps);
      assert.ok(records.some((a) => a.operation === 'desired_state_check' && a.result === 'detected'));
      assert.ok(!records.some((a) => a.operation === 'enforce_desired_state'));
      assert.equal((await call<ActivePlan>(deps, 'get_active_power_plan')).desired?.status, 'policy-managed');
    });

    it('does not fight a hold, and the restore after it lands in the desired state', async () => {
      rig = await enforcing('balanced');
      const { deps } = rig;
      deps.desired.start();
      deps.holds.start();
      await moreChecks(deps, 1);
      const h = await call<HoldResult>(deps, 'hold_power_plan', { plan: 'high-performance', for: '10m' });
      await moreChecks(deps, 2);
      assert.equal(await rig.activeId(), SCHEME.highPerformance, 'the hold wins');
      const d = await desired(deps);
      assert.equal(d.status, 'held');
      assert.equal(d.driftTotal, 0, 'a hold is not drift');
      await call(deps, 'release_power_plan', { id: h.hold.id });
      assert.equal(await rig.activeId(), SCHEME.balanced);
      assert.equal((await desired(deps)).status, 'in-desired-state');
    });
  });
}

describe('desired-state enforcement on a failing backend', () => {
  it('tries at most once per interval and audits the failure once', async () => {
    let attempts = 0;
    const t = await testDeps({
      POWERPLAN_DESIRED_PLAN: 'high-performance',
      POWERPLAN_ENFORCE: 'true',
      POWERPLAN_DESIRED_INTERVAL: '3600',
    });
    const real = t.deps.backend;
    const failing: PowerBackend = {
      ...real,
      name: real.name,
      capabilities: (): Promise<Capabilities> => real.capabilities(),
      listPlans: () => real.listPlans(),
      getActive: () => real.getActive(),
      facts: () => real.facts(),
      async setActive() {
        attempts++;
        throw new PowerPlanError('os_error', 'powercfg failed');
      },
    };
    const deps: Deps = buildDeps(t.deps.config, { backend: failing, store: t.deps.store, log: t.deps.log });
    try {
      deps.desired.start();
      await moreChecks(deps, 1);
      const rt = deps.desired;
      for (let i = 0; i < 5; i++) {
        const n = rt.checks;
        void rt.checkNow();
        await until('a check', async () => rt.checks > n);
      }
      assert.equal(attempts, 1);
      const failed = (await auditOf(deps)).filter(
        (a) => a.operation === 'enforce_desired_state' && a.result === 'failed',
      );
      assert.equal(failed.length, 1);
      assert.match((await desired(deps)).lastError ?? '', /powercfg failed/);
    } finally {
      deps.shutdown.abort();
      await t.cleanup();
    }
  });
});
