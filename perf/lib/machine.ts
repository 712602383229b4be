/**
 * What every benchmark script reports with its figures: the machine, the load average before and
 * after (figures from a busy machine are read as such), and small statistics helpers.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { sampleCpuLoad } from '../../src/bench/cpu-load.ts';

export const machine = (): string =>
  `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} logical CPUs, ` +
  `${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, Node ${process.version}`;

export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

/**
 * A warning when this Node.js is not of a line the project supports (package.json `engines`: 22
 * from 22.19, 24 and later): its figures are not the product's. Node 20's V8, for one, builds an
 * object spread followed by many fields about 100 times slower than 22's (26 us against 0.2 us for
 * a fleet host's status), which alone added 0.3-0.5 s to a fleet of 10,000.
 */
export const unsupportedNode = (version = process.versions.node): string | undefined => {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if ((major === 22 && minor >= 19) || major >= 24) return undefined;
  const engines = (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      engines: { node: string };
    }
  ).engines.node;
  return `Node ${version} is not a supported line (package.json engines: ${engines}): these figures are not the product's; put Node 22 or 24 first on PATH.`;
};

/** Prints the header every script starts with. */
export const header = (title: string): void => {
  console.log(`# ${title}`);
  console.log(`Machine: ${machine()}`);
  const warning = unsupportedNode();
  if (warning) console.log(`**${warning}**`);
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
