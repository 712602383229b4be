/**
 * perf:workload-replay --resample's arithmetic (perf/lib/workload-table.ts): a condition whose
 * every recorded round put the estimate on the held share is within the goal in every draw, one
 * whose estimate was twice it in every round in none, and one half and half in some draws but not
 * all; the same runs give the same chances (a fixed seed); conditions without emulation are left out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Run } from '../../perf/lib/workload-run.ts';
import { resample } from '../../perf/lib/workload-table.ts';

const run = (workload: string, plan: string, round: number, held: number, estimate: number): Run =>
  ({
    round,
    plan,
    workload,
    heldMs: held / 100,
    workCpuMs: 1,
    read: { estimate: { addedPercent: estimate } },
  }) as unknown as Run;

test('resample: the chance of each condition within the goal, from its recorded rounds', () => {
  const runs = [0, 1, 2, 3, 4, 5].flatMap((round) => [
    run('exact', 'slow ramp', round, 40, 40),
    run('double', 'slow ramp', round, 40, 80),
    run('mixed', 'slow ramp', round, 40, round % 2 ? 40 : 80),
    run('exact', 'none', round, 0, 0),
  ]);
  const chances = resample(runs, 3);
  const of = (w: string) => chances.find((c) => c.workload === w)?.chance;
  assert.equal(chances.length, 3, 'no condition without emulation');
  assert.equal(of('exact'), 1);
  assert.equal(of('double'), 0);
  const mixed = of('mixed') ?? Number.NaN;
  // Three rounds of a half-and-half pool: the median is the exact one in half the draws.
  assert.ok(mixed > 0.4 && mixed < 0.6, `mixed: ${mixed}`);
  assert.deepEqual(resample(runs, 3), chances, 'the same figures from the same runs');
  assert.equal(chances.find((c) => c.workload === 'exact')?.rounds, 6);
});
