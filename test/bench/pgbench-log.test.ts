import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { between, parseTransactionLog } from '../../perf/lib/pg-load.ts';

const fixture = (name: string) =>
  readFile(join(import.meta.dirname, '..', 'fixtures', 'pgbench', name), 'utf8');

describe("pgbench's per-transaction log, read or refused", () => {
  it('reads a --rate run: when each transaction was answered, its latency and its lag', async () => {
    const t = parseTransactionLog(await fixture('rate-R20-T1.txt'));
    assert.equal(t.length, 20);
    assert.deepEqual(t[1], { endMs: 1796658837460.399, latencyMs: 3.045, lagMs: 0.269 });
    // Answered in order, across the second's boundary (time_us starts again at 4274).
    for (let i = 1; i < t.length; i++)
      assert.ok(t[i]!.endMs > t[i - 1]!.endMs, `transaction ${i + 1} after ${i}`);
    assert.equal(t.at(-1)!.endMs, 1796658838219.792);
  });

  it('reads a back-to-back run, whose lines have no lag field', async () => {
    const t = parseTransactionLog(await fixture('back-to-back-t5.txt'));
    assert.deepEqual(
      t.map((x) => [x.latencyMs, x.lagMs]),
      [
        [4.62, 0],
        [2.314, 0],
        [2.264, 0],
        [2.196, 0],
        [2.217, 0],
      ],
    );
  });

  it('refuses a line it does not know (a skipped transaction, an aggregated log, a gap in the numbers)', () => {
    assert.throws(
      () => parseTransactionLog('0 1 4620 0 1796658838 361332\n0 3 2314 0 1796658838 363706\n'),
      /a line it should not/,
    );
    assert.throws(() => parseTransactionLog('0 1 skipped 0 1796658837 403004 191\n'), /a line it should not/);
    assert.throws(
      () => parseTransactionLog('1796658837 20 52000 140000000 2000 4000\n'),
      /a line it should not/,
    );
  });

  it("counts the transactions answered inside a window, never the connection's first", async () => {
    const transactions = parseTransactionLog(await fixture('rate-R20-T1.txt'));
    const run = { transactions };
    // From just after the first answer to just after the twelfth.
    const w = between(run, 1796658837403.1, 1796658837928.2);
    assert.equal(w.count, 11);
    assert.equal(
      w.latencyMs.toFixed(3),
      ((3045 + 2700 + 3653 + 2616 + 2822 + 2570 + 3021 + 2625 + 2572 + 2551 + 3183) / 11 / 1000).toFixed(3),
    );
    assert.equal(between(run, 1796658837403.1).count, 19);
    // The server answered the first before the window opened; pgbench logged it just after.
    assert.equal(between(run, 1796658837402.9).count, 19);
    assert.equal(between(run, 1796658837460.4).count, 18);
  });
});
