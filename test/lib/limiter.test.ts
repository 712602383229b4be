import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { limiter } from '../../src/lib/map-limited.ts';

/** A task that records when it ran and ends when told. */
const gate = () => {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { done, open };
};

describe('limiter', () => {
  it('runs at most `limit` tasks at once, in the order asked; a task asked `first` goes before those waiting', async () => {
    const run = limiter(2);
    const started: string[] = [];
    let active = 0;
    let most = 0;
    const gates = new Map<string, ReturnType<typeof gate>>();
    const task = (name: string, first = false) =>
      run(async () => {
        started.push(name);
        most = Math.max(most, ++active);
        const g = gate();
        gates.set(name, g);
        await g.done;
        active--;
        return name;
      }, first);
    const all = [task('a'), task('b'), task('c'), task('d')];
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, ['a', 'b']);
    all.push(task('urgent', true));
    gates.get('a')!.open();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, ['a', 'b', 'urgent'], 'the task asked first takes the freed slot');
    // A task asked while a slot is being handed on waits its turn: the limit holds.
    all.push(task('late'));
    for (const name of ['b', 'urgent', 'c', 'd', 'late']) {
      await new Promise((r) => setImmediate(r));
      gates.get(name)!.open();
    }
    assert.deepEqual(await Promise.all(all), ['a', 'b', 'c', 'd', 'urgent', 'late']);
    assert.deepEqual(started, ['a', 'b', 'urgent', 'c', 'd', 'late']);
    assert.equal(most, 2);
  });

  it('frees the slot of a task that fails, and passes its error on', async () => {
    const run = limiter(1);
    await assert.rejects(
      run(async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await run(async () => 'next'), 'next');
  });
});
