import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseCyclictest, parseCyclictestThreads } from '../../perf/lib/cyclictest.ts';

const fixture = (name: string) =>
  readFile(join(import.meta.dirname, '..', 'fixtures', 'cyclictest', name), 'utf8');

describe("cyclictest's output, read or refused", () => {
  it('reads the summary line of each thread (T: 0 ( pid) P: I: C: Min: Act: Avg: Max:)', async () => {
    const [t] = parseCyclictestThreads(await fixture('summary-t1-i1000-l50.txt'));
    assert.deepEqual(t, {
      thread: 0,
      pid: 3606,
      priority: 0,
      intervalUs: 1000,
      cycles: 50,
      min: 36,
      act: 74,
      avg: 614,
      max: 6333,
    });
  });

  it('reads a captured histogram: 39 in the buckets plus 11 overflows, the maximum from the summary', async () => {
    const r = parseCyclictest(await fixture('histogram-t1-i1000-l50-h100.txt'));
    assert.equal(r.samples, 50);
    assert.equal(r.overflows, 11);
    assert.deepEqual([r.min, r.avg, r.max], [29, 772, 15964]);
    assert.ok(r.p50 >= r.min && r.p50 <= 100);
    assert.equal(r.p99, 15964, 'the 99th percentile is in the overflow');
  });

  it('refuses output without a histogram, naming what it read, instead of NaN', async () => {
    assert.throws(
      () =>
        parseCyclictest('T: 0 ( 3606) P: 0 I:1000 C:     50 Min:     36 Act:   74 Avg:  614 Max:    6333\n'),
      /no histogram .*min 36, avg 614, max 6333/,
    );
  });

  it('refuses text it does not know, with the line', () => {
    assert.throws(
      () => parseCyclictest('cyclictest: invalid option -- z\n'),
      /line 1 is not one this parser knows: "cyclictest: invalid option -- z"/,
    );
    assert.throws(() => parseCyclictest(''), /neither a histogram nor a summary line/);
    assert.throws(
      () => parseCyclictestThreads('T: 0 ( 3606) P: 0 I:1000 C: fifty\n'),
      /not one this parser knows/,
    );
  });
});
