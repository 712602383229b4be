import assert from 'node:assert/strict';
import { isPowerPlanError } from '../../src/domain/errors.ts';

/**
 * For `assert.rejects`: the error is a PowerPlanError with this code, and its message contains
 * every string and matches every pattern given.
 */
export const isCode =
  (code: string, ...expected: (string | RegExp)[]) =>
  (e: unknown) => {
    assert.ok(isPowerPlanError(e), `expected a PowerPlanError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    for (const x of expected) {
      if (typeof x === 'string') assert.ok(e.message.includes(x), `'${x}' in: ${e.message}`);
      else assert.match(e.message, x);
    }
    return true;
  };
