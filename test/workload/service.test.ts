/**
 * get_workload_cost's costs as the service finds them: the newest recent benchmark under the plan in
 * force, and one under a performance plan, whose ramp is the platform's (left out of addedPercent,
 * given as platformPercent); under a performance plan its own benchmark is that floor.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BenchmarkResult } from '../../src/domain/benchmark.ts';
import type { Plan } from '../../src/domain/schemas.ts';
import type { IdleSnapshot } from '../../src/domain/workload.ts';
import { WorkloadService } from '../../src/services/workload.ts';
import { activeOf, benchmarkResult, plansWith, win, windowsSettings } from '../advice/scenarios.ts';

/** One CPU, one idle state: `bursts` bursts of work a second, 10% busy, between two reads 10 s apart. */
const snapshots = (bursts: number): [IdleSnapshot, IdleSnapshot] => {
  const at = (s: number, k: number): IdleSnapshot => ({
    source: 'cpuidle',
    atS: s,
    cpus: [
      {
        cpu: 0,
        busyUs: k * 1e6,
        totalUs: s * 1e6,
        idleUs: (s - k) * 1e6,
        wakeups: null,
        states: [
          {
            name: 'C1',
            exitLatencyUs: 2,
            usage: Math.round(k * bursts * 10),
            timeUs: (s - k) * 1e6,
            above: 0,
            below: 0,
            disabled: false,
          },
        ],
      },
    ],
    tasks: [{ pid: 100, runUs: k * 1e6, sleeps: Math.round(k * bursts * 10), cpu: 0 }],
  });
  return [at(100, 10), at(110, 11)];
};

const planned = (penaltyPercent: number, id: string, plan: Omit<Plan, 'active'>): BenchmarkResult =>
  benchmarkResult(penaltyPercent, {
    id,
    activePlan: activeOf(plansWith([plan], plan.id), windowsSettings.balanced()),
  });

const service = (active: Omit<Plan, 'active'>, results: BenchmarkResult[]) => {
  const reads = snapshots(20);
  let i = 0;
  return new WorkloadService({
    reader: async () => reads[Math.min(i++, 1)]!,
    backend: { getActive: async () => activeOf(plansWith([active], active.id), windowsSettings.balanced()) },
    bench: {
      list: async (limit = 100) => ({
        benchmarks: results.slice(0, limit).map((r) => ({ id: r.id, startedAt: r.startedAt })),
      }),
      get: async (id: string) => results.find((r) => r.id === id)!,
    } as never,
  });
};

const estimate = async (s: WorkloadService) => {
  await s.cost({ consumer: 'request' });
  const out = await s.cost({ consumer: 'request' });
  assert.ok(out.estimate, String(out.reason));
  return out.estimate;
};

describe('the workload service: the plan costs against a performance plan', () => {
  const balanced = planned(60, 'bm-20260101-000002-bbbbbb', win.balanced);
  const high = planned(20, 'bm-20260101-000001-aaaaaa', win.high);

  it('under Balanced: the ramp High performance still shows is the platform, left out', async () => {
    const alone = await estimate(service(win.balanced, [balanced]));
    assert.equal(alone.platformPercent, undefined);
    assert.equal(alone.recoverablePercent, undefined);
    const floored = await estimate(service(win.balanced, [balanced, high]));
    assert.equal(floored.benchmarkId, balanced.id);
    assert.equal(floored.recoverableFrom, high.id);
    assert.ok(floored.platformPercent !== undefined && floored.platformPercent > 0);
    assert.ok(floored.rampPercent < alone.rampPercent, `${floored.rampPercent} < ${alone.rampPercent}`);
    assert.ok(
      Math.abs(floored.rampPercent + floored.platformPercent - alone.rampPercent) <= 0.2,
      `${floored.rampPercent} + ${floored.platformPercent} = ${alone.rampPercent}`,
    );
  });

  it('under High performance: its own benchmark is the floor, so no ramp is the plan', async () => {
    const e = await estimate(service(win.high, [balanced, high]));
    assert.equal(e.benchmarkId, high.id);
    assert.equal(e.rampPercent, 0);
    assert.ok(e.platformPercent !== undefined && e.platformPercent > 0);
    assert.equal(e.recoverablePercent, 0);
  });
});
