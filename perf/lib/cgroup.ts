/**
 * A cgroup for a benchmark script (all its threads, and the children it starts while inside) whose
 * CPU quota can be switched on and off (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max), with a high
 * weight so that the quota, not the neighbours' load, decides what the script gets. Needs root.
 * Shared by perf/sensitivity.ts and perf/quality.ts.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const PERIOD_US = 100_000;

export interface Quota {
  /** What was set up, for the report. */
  kind: string;
  /** Applies the quota (percent of one CPU), or lifts it (null). */
  set(percent: number | null): Promise<void>;
  enter(): Promise<void>;
  leave(): Promise<void>;
  remove(): Promise<void>;
  /** The controller's throttling counters, proof that the quota was enforced. */
  stat(): Promise<string>;
}

const ownCgroupPath = async (match: (controllers: string) => boolean): Promise<string> => {
  for (const line of (await readFile('/proc/self/cgroup', 'utf8')).split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers !== undefined && path !== undefined && match(controllers)) return path;
  }
  return '/';
};

export const quotaUs = (percent: number): string => String(Math.round((PERIOD_US * percent) / 100));

/** Creates (or reuses) the cgroup `name`; `percent` only names the quota in `kind`. */
export const cgroupQuota = async (name: string, percent?: number): Promise<Quota> => {
  const shown = (p: string) => (percent === undefined ? 'quota per condition' : p);
  const v1 = '/sys/fs/cgroup/cpu';
  if (existsSync(join(v1, 'cpu.cfs_quota_us'))) {
    const home = join(v1, await ownCgroupPath((c) => c.split(',').includes('cpu')));
    const dir = join(v1, name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    // The weight of nice -20: the run gets its share even beside other work.
    await writeFile(join(dir, 'cpu.shares'), '88761');
    return {
      kind: `cgroup v1 ${shown(`cpu.cfs_quota_us=${quotaUs(percent ?? 100)}`)} cpu.cfs_period_us=${PERIOD_US}, cpu.shares=88761`,
      set: (p) => writeFile(join(dir, 'cpu.cfs_quota_us'), p === null ? '-1' : quotaUs(p)),
      enter: () => writeFile(join(dir, 'cgroup.procs'), String(process.pid)),
      leave: () => writeFile(join(home, 'cgroup.procs'), String(process.pid)),
      remove: () => rmdir(dir),
      stat: () => readFile(join(dir, 'cpu.stat'), 'utf8'),
    };
  }
  const v2 = '/sys/fs/cgroup';
  if (existsSync(join(v2, 'cgroup.controllers'))) {
    const home = join(v2, await ownCgroupPath((c) => c === ''));
    const dir = join(v2, name);
    await writeFile(join(v2, 'cgroup.subtree_control'), '+cpu').catch(() => undefined);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'cpu.weight'), '10000');
    return {
      kind: `cgroup v2 ${shown(`cpu.max="${quotaUs(percent ?? 100)} ${PERIOD_US}"`)}, cpu.weight=10000`,
      set: (p) => writeFile(join(dir, 'cpu.max'), `${p === null ? 'max' : quotaUs(p)} ${PERIOD_US}`),
      enter: () => writeFile(join(dir, 'cgroup.procs'), String(process.pid)),
      leave: () => writeFile(join(home, 'cgroup.procs'), String(process.pid)),
      remove: () => rmdir(dir),
      stat: () => readFile(join(dir, 'cpu.stat'), 'utf8'),
    };
  }
  throw new Error('No writable cgroup cpu controller (v1 cpu.cfs_quota_us or v2 cpu.max) found.');
};
