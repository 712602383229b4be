/**
 * What every benchmark script reports with its figures: the machine, the load average before and
 * after (figures from a busy machine are read as such), and small statistics helpers.
 */
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { sampleCpuLoad } from '../../src/bench/cpu-load.ts';

export const machine = (): string =>
  `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} logical CPUs, ` +
  `${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, Node ${process.version}`;

export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

/** Prints the header every script starts with. */
export const header = (title: string): void => {
  console.log(`# ${title}`);
  console.log(`Machine: ${machine()}`);
  console.log(`Load average (1/5/15 min) at start: ${loadAverage()}; ${new Date().toISOString()}\n`);
};

export const footer = (): void => {
  console.log(`\nLoad average (1/5/15 min) at end: ${loadAverage()}`);
};

/**
 * Other work on the machine takes the CPU share a measurement is meant to have: wait (up to about
 * `tries` x 2 s) until the CPUs are under `maxBusy`% busy, and answer what was seen.
 */
export const quietBusyPercent = async (maxBusy = 30, tries = 10): Promise<number> => {
  let load = await sampleCpuLoad(500);
  for (let i = 0; i < tries && load.busyPercent > maxBusy; i++) {
    process.stderr.write(`waiting for a quiet machine (${load.busyPercent}% busy)\n`);
    await new Promise((r) => setTimeout(r, 1500));
    load = await sampleCpuLoad(500);
  }
  return load.busyPercent;
};

export const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Coefficient of variation (sample standard deviation / mean). */
export const cv = (xs: readonly number[]): number => {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  const variance = xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
  return Math.sqrt(variance) / m;
};

export const pct = (x: number, digits = 1): string => `${(x * 100).toFixed(digits)}%`;

/** "met" or "missed by <how much>" for a goal `value <= limit` (or >= with `atLeast`). */
export const verdict = (value: number, limit: number, unit = '', atLeast = false): string => {
  const ok = atLeast ? value >= limit : value <= limit;
  if (ok) return 'met';
  const by = Math.abs(value - limit);
  return `missed by ${Number.isInteger(by) ? by : by.toFixed(unit === '%' ? 1 : 2)}${unit}`;
};
