/**
 * A value for the tests of one describe block: made in a `before` hook, disposed of in an `after`
 * hook. The object returned is filled in (the made value's own properties) once `before` has run,
 * so the block names it once at its top and its tests read it as they would the value itself.
 */
import { after, before } from 'node:test';
import { type TestDeps, testDeps } from './deps.ts';

export const perBlock = <T extends object>(
  make: () => Promise<T>,
  dispose: (value: T) => Promise<unknown>,
): T => {
  const value = {} as T;
  let made = false;
  before(async () => {
    Object.assign(value, await make());
    made = true;
  });
  after(async () => {
    if (made) await dispose(value);
  });
  return value;
};

/** Fresh deps (see testDeps) for the tests of one describe block. */
export const depsPerBlock = (...args: Parameters<typeof testDeps>): TestDeps =>
  perBlock(
    () => testDeps(...args),
    (t) => t.cleanup(),
  );
