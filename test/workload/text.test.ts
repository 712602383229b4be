import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WorkloadObservation } from '../../src/domain/workload.ts';
import { formatWorkloadCost } from '../../src/services/workload-text.ts';

const observation = (workInUnits: boolean | undefined): WorkloadObservation => ({
  source: 'cpuidle',
  since: 'window',
  windowSeconds: 10,
  cpus: 2,
  busyShare: 0.06,
  busySeconds: 1.2,
  idleEntriesPerSecond: 100,
  meanIdlePeriodUs: 18_800,
  meanBusyPeriodUs: 1200,
  workBurstsPerSecond: 96,
  workCoveredShare: 0.9,
  states: [],
  perCpu: [
    {
      cpu: 0,
      busyShare: 0.11,
      idleEntriesPerSecond: 98,
      meanIdlePeriodUs: 9100,
      workBurstsPerSecond: 96,
      ...(workInUnits === undefined ? {} : { workInUnits }),
    },
    { cpu: 1, busyShare: 0.01, idleEntriesPerSecond: 2, meanIdlePeriodUs: 495_000, workBurstsPerSecond: 0 },
  ],
  perCpuTruncated: false,
});

describe('the workload text (CLI)', () => {
  it('says where the bursts of work are 1 ms units, so that 96 a second are not read as 96 queries', () => {
    const text = (u: boolean | undefined) =>
      formatWorkloadCost({
        observation: observation(u),
        estimate: null,
        reason: 'x',
        plan: null,
        summary: 's',
      });
    assert.match(text(true), /96 bursts of work\/s \(in 1 ms units on CPU 0\)/);
    assert.doesNotMatch(text(false), /units/);
    assert.doesNotMatch(text(undefined), /units/);
  });
});
