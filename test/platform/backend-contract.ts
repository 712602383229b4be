/**
 * The contract every PowerBackend passes (simulated, Windows against the powercfg emulator, Linux
 * against fixture trees and daemon emulators). Call `backendContract` from a backend's test file
 * with a setup that builds a fresh backend over fresh state for each test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PowerPlanError } from '../../src/domain/errors.ts';
import { ActivePlan, Capabilities, Plan } from '../../src/domain/schemas.ts';
import type { PowerBackend } from '../../src/platform/backend.ts';

export interface ContractSubject {
  backend: PowerBackend;
  cleanup?: () => Promise<void>;
}

export interface ContractOptions {
  /** The backend exposes plans and can set them (false: a read-only system such as a VM without cpufreq). */
  settable: boolean;
}

const withSubject = async (setup: () => Promise<ContractSubject>, fn: (b: PowerBackend) => Promise<void>) => {
  const subject = await setup();
  try {
    await fn(subject.backend);
  } finally {
    await subject.cleanup?.();
  }
};

export const backendContract = (
  label: string,
  setup: () => Promise<ContractSubject>,
  options: ContractOptions,
) => {
  describe(`PowerBackend contract: ${label}`, () => {
    it('answers capabilities, plans and the active plan in the common shapes', () =>
      withSubject(setup, async (b) => {
        Capabilities.parse(await b.capabilities());
        const plans = await b.listPlans();
        for (const p of plans) Plan.parse(p);
        assert.equal(new Set(plans.map((p) => p.id)).size, plans.length, 'plan ids are unique');
        const active = ActivePlan.parse(await b.getActive());
        const marked = plans.filter((p) => p.active);
        assert.ok(marked.length <= 1, 'at most one plan is marked active');
        if (marked.length === 1) assert.equal(active.plan?.id, marked[0]!.id);
        assert.deepEqual(
          active.warnings,
          active.notes?.map((n) => n.text),
          'warnings are the notes in words',
        );
        const facts = await b.facts();
        assert.equal(typeof facts.virtualization.detected, 'boolean');
      }));

    if (!options.settable) {
      it('says why it cannot set, and refuses a set with a typed error', () =>
        withSubject(setup, async (b) => {
          const active = await b.getActive();
          assert.equal(active.canSet, false);
          assert.ok(active.cannotSetReason && active.cannotSetReason.length > 10, 'a reason is given');
          await assert.rejects(b.setActive('performance'), (e: unknown) => e instanceof PowerPlanError);
        }));
      return;
    }

    it('sets another plan and reads it back', () =>
      withSubject(setup, async (b) => {
        const plans = await b.listPlans();
        const active = plans.find((p) => p.active);
        assert.ok(active, 'a settable backend has an active plan');
        const other = plans.find((p) => !p.active);
        assert.ok(other, 'a settable backend offers a second plan');
        await b.setActive(other.id);
        assert.equal((await b.getActive()).plan?.id, other.id);
        assert.equal((await b.listPlans()).find((p) => p.active)?.id, other.id);
        await b.setActive(active.id);
        assert.equal((await b.getActive()).plan?.id, active.id);
      }));

    it('setting the active plan again leaves it active', () =>
      withSubject(setup, async (b) => {
        const active = (await b.getActive()).plan!;
        await b.setActive(active.id);
        assert.equal((await b.getActive()).plan?.id, active.id);
      }));

    it('refuses an unknown plan id with a typed error and changes nothing', () =>
      withSubject(setup, async (b) => {
        const before = (await b.getActive()).plan!.id;
        await assert.rejects(b.setActive('no-such-plan-0000'), (e: unknown) => e instanceof PowerPlanError);
        assert.equal((await b.getActive()).plan?.id, before);
      }));
  });
};
