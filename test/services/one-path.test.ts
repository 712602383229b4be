/**
 * Every plan change takes one path: a set, a hold, a comparison (its steps and its restore) and an
 * enforcement each enter the plan-change service once, every switch happens inside that call, and
 * the plan change never calls back into the service that asked (holds, desired state,
 * comparisons) midway. Traced by wrapping the services' methods and the backend's switch.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Deps } from '../../src/deps.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { GatedBench } from '../compare/gated-bench.ts';
import { call } from '../support/call.ts';
import { type TestDeps, testDeps, withTestDeps } from '../support/deps.ts';

const methodsOf = (o: object) =>
  Object.getOwnPropertyNames(Object.getPrototypeOf(o)).filter(
    (n) => n !== 'constructor' && typeof (o as Record<string, unknown>)[n] === 'function',
  );

/** Records the plan-change entries, the switches, and any call into the asking services while inside. */
const trace = (deps: Deps) => {
  const events: string[] = [];
  let inside = 0;
  const wrap = (o: object, name: string, around: (run: () => unknown) => unknown) => {
    const target = o as Record<string, (...a: unknown[]) => unknown>;
    const original = target[name]!.bind(o);
    target[name] = (...args: unknown[]) => around(() => original(...args));
  };
  for (const name of ['change', 'session', 'settle'] as const) {
    wrap(deps.planChange, name, async (run) => {
      // The entry from outside; `change` runs in a session of its own.
      if (!inside) events.push(`plan change: ${name}`);
      inside++;
      try {
        return await run();
      } finally {
        inside--;
      }
    });
  }
  wrap(deps.backend, 'setActive', (run) => {
    events.push(inside ? 'switch' : 'switch OUTSIDE the plan change');
    return run();
  });
  for (const [label, service] of [
    ['holds', deps.holds],
    ['desired', deps.desired],
    ['comparisons', deps.comparisons],
  ] as const) {
    for (const name of methodsOf(service)) {
      wrap(service, name, (run) => {
        if (inside) events.push(`back into ${label}.${name}`);
        return run();
      });
    }
  }
  return events;
};

const switchRecords = async (t: TestDeps) =>
  ((await t.deps.store.readLines('audit.jsonl')) as { operation: string; result: string }[]).filter(
    (r) => r.result === 'changed' || r.result === 'restored',
  );

describe('one path for every plan change', () => {
  /** One call that switches once: through the plan change, audited as that operation. */
  const oneSwitch = (operation: string, input: Record<string, unknown>) =>
    withTestDeps(async (t) => {
      const events = trace(t.deps);
      await call(t.deps, operation, input);
      assert.deepEqual(events, ['plan change: change', 'switch']);
      assert.deepEqual(
        (await switchRecords(t)).map((r) => r.operation),
        [operation],
      );
    });

  it('a set', () => oneSwitch('set_power_plan', { plan: 'high-performance' }));

  it('a hold', () => oneSwitch('hold_power_plan', { plan: 'high-performance', for: '1h' }));

  it('a comparison: its steps and its restore inside one plan-change session', async () => {
    const t = await testDeps({}, { bench: new GatedBench(99).asService() });
    try {
      const events = trace(t.deps);
      await call(t.deps, 'compare_power_plans', { settleMs: 0, force: true });
      assert.deepEqual(events, ['plan change: session', 'switch', 'switch']);
      assert.deepEqual(
        (await switchRecords(t)).map((r) => r.operation),
        ['compare_power_plans', 'compare_restore'],
      );
    } finally {
      await t.cleanup();
    }
  });

  it('an enforcement', async () => {
    const t = await testDeps();
    try {
      await call(t.deps, 'set_desired_power_plan', { plan: 'balanced', enforce: true });
      await t.deps.backend.setActive(SCHEME.highPerformance);
      const events = trace(t.deps);
      await t.deps.desired.check();
      assert.deepEqual(events, ['plan change: change', 'switch']);
      assert.equal((await t.deps.backend.getActive()).plan?.id, SCHEME.balanced);
      assert.deepEqual(
        (await switchRecords(t)).filter((r) => r.operation === 'enforce_desired_state').length,
        1,
      );
    } finally {
      await t.cleanup();
    }
  });
});
