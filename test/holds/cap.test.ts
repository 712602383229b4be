/**
 * Live holds are capped (POWERPLAN_MAX_HOLDS): the attack that took 3,000 holds, after which every
 * 409 carried 1.6 MB of them, now stops at the cap with a short refusal, and every refusal naming
 * holds lists only the first few and counts the rest.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPowerPlanError } from '../../src/domain/errors.ts';
import { call } from '../support/call.ts';
import { depsPerBlock } from '../support/fixture.ts';

describe('holds are capped', () => {
  const t = depsPerBlock({ POWERPLAN_MAX_HOLDS: '5' });

  it('refuses the hold past the cap (409), short, and changes nothing', async () => {
    for (let i = 0; i < 5; i++)
      await call(t.deps, 'hold_power_plan', { plan: 'power-saver', for: '1h', reason: `r${i}` });
    await assert.rejects(call(t.deps, 'hold_power_plan', { plan: 'power-saver', for: '1h' }), (e) => {
      assert.ok(isPowerPlanError(e));
      assert.equal(e.code, 'conflict');
      assert.match(e.message, /^5 holds are in force, the most this service keeps \(POWERPLAN_MAX_HOLDS=5\)/);
      assert.match(e.message, / and 2 more\. Release some first/);
      assert.equal((e.details?.holds as unknown[] | undefined)?.length, 3);
      assert.equal(e.details?.holdsInForce, 5);
      assert.ok(JSON.stringify(e.details).length < 2000);
      return true;
    });
    assert.equal(((await call(t.deps, 'list_holds')) as { holds: unknown[] }).holds.length, 5);
  });

  it('a set refused by the holds names the first three and counts the rest', async () => {
    await assert.rejects(call(t.deps, 'set_power_plan', { plan: 'high-performance' }), (e) => {
      assert.ok(isPowerPlanError(e));
      assert.equal(e.code, 'conflict');
      assert.match(e.message, /The plan is held: .* and 2 more\. Release the holds/);
      assert.equal((e.details?.holds as unknown[] | undefined)?.length, 3);
      return true;
    });
  });
});
