/**
 * How busy the CPUs are right now, from two `os.cpus()` time snapshots a short interval apart: the
 * busy guard's input and part of a result's environment. Waits with a timer, never by spinning.
 */
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

export interface CpuLoad {
  /** Average busy % over all CPUs during the sample. */
  busyPercent: number;
  /** Busy % of the busiest CPU during the sample. */
  maxBusyPercent: number;
  loadAverage: number[];
}

type Times = { idle: number; total: number }[];

const snapshot = (): Times =>
  cpus().map(({ times }) => ({
    idle: times.idle,
    total: times.user + times.nice + times.sys + times.irq + times.idle,
  }));

/** Busy % per CPU between two snapshots (pure, so it is testable). */
export const busyPercents = (before: Times, after: Times): number[] =>
  after.map((a, i) => {
    const b = before[i];
    const total = b ? a.total - b.total : 0;
    return total > 0 && b ? Math.min(100, Math.max(0, (1 - (a.idle - b.idle) / total) * 100)) : 0;
  });

export const sampleCpuLoad = async (ms = 200, signal?: AbortSignal): Promise<CpuLoad> => {
  const before = snapshot();
  await sleep(ms, undefined, { signal });
  const per = busyPercents(before, snapshot());
  const avg = per.length ? per.reduce((s, v) => s + v, 0) / per.length : 0;
  return {
    busyPercent: Math.round(avg * 10) / 10,
    maxBusyPercent: Math.round(Math.max(0, ...per) * 10) / 10,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
};
