/**
 * What an earlier perf:workload check left behind when it was killed outright (SIGKILL, a lost
 * session: no handler of its own runs then), ended and removed before a new check starts. Without
 * this the next check stops at once on the old product's port, and the old cluster, its cgroups
 * and its directories stay until someone finds them by hand.
 *
 * A check marks what it owns with its process id: its run directory holds `check.pid`, and its
 * cgroups and the busy filler's FIFO directory carry the id in their names. What belongs to a
 * check whose process is gone is a leftover: the processes whose command line names its run
 * directory (the postmaster's data directory, the product's state directory) are ended
 * (PostgreSQL's immediate shutdown, SIGTERM for the product, SIGKILL after 5 s), every task still
 * in its cgroups is killed, and the directories are removed. A check still running is left alone.
 */
import { existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, realpath, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { v1Roots } from './emulation.ts';

const uid = process.getuid?.() ?? 0;

const alive = (pid: number): boolean => Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`);

const pidsIn = async (file: string): Promise<number[]> =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((p) => p > 0);

/** Sends `signal` to each, then SIGKILL to those still there after `waitMs`. */
const ended = async (pids: number[], signal: NodeJS.Signals, waitMs = 5000): Promise<void> => {
  const send = (p: number, s: NodeJS.Signals) => {
    try {
      process.kill(p, s);
    } catch {
      // Gone already.
    }
  };
  for (const p of pids) send(p, signal);
  for (let t = 0; t < waitMs && pids.some(alive); t += 50) await sleep(50);
  for (const p of pids.filter(alive)) send(p, 'SIGKILL');
  for (let t = 0; t < 2000 && pids.some(alive); t += 50) await sleep(50);
};

/** Processes whose command line names `dir` (a path inside it). */
const namingDir = async (dir: string): Promise<{ pid: number; postmaster: boolean }[]> => {
  const out: { pid: number; postmaster: boolean }[] = [];
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const argv = (await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (argv.some((a) => a.startsWith(`${dir}/`)))
      out.push({ pid: Number(e), postmaster: /(^|\/)postgres$/.test(argv[0] ?? '') });
  }
  return out;
};

/**
 * The directory a check keeps its runs in: made if missing; refused unless it is a directory (not
 * a link) of this user that no one else may write to, since runs made in it are taken as ours.
 */
export const ownTempDir = async (temp: string): Promise<void> => {
  await mkdir(temp, { recursive: true, mode: 0o755 });
  const s = await lstat(temp);
  if (!s.isDirectory() || s.uid !== uid || (s.mode & 0o022) !== 0)
    throw new Error(
      `${temp} is not a directory of this user closed to others (owner ${s.uid}, mode ${(s.mode & 0o777).toString(8)}): ` +
        'someone else could change the runs in it; remove it or name another',
    );
};

/** Marks `runDir` as the run of this process. */
export const markRun = (runDir: string): Promise<void> =>
  writeFile(join(runDir, 'check.pid'), `${process.pid}\n`, { mode: 0o644 });

/**
 * Ends and removes the leftovers of checks that are gone: run directories in `temp` (of
 * ownTempDir), cgroups named `<prefix><pid>` (and the filler's `-fill` and `-rest`) under the v1
 * roots, and FIFO directories `<prefix><pid>-filler-*` in /dev/shm. Answers what it removed.
 */
export const sweepLeftovers = async (o: {
  temp: string;
  prefix: string;
  cgroupRoots?: string[];
  shm?: string;
}): Promise<string[]> => {
  const removed: string[] = [];
  for (const e of existsSync(o.temp) ? await readdir(o.temp) : []) {
    if (!e.startsWith('run-')) continue;
    const dir = join(o.temp, e);
    const owner = Number((await readFile(join(dir, 'check.pid'), 'utf8').catch(() => '')).trim());
    if (alive(owner)) continue;
    const procs = await namingDir(dir);
    // The postmaster first: its immediate shutdown ends its backends with it.
    await ended(
      procs.filter((p) => p.postmaster).map((p) => p.pid),
      'SIGQUIT',
    );
    await ended(
      procs.filter((p) => !p.postmaster).map((p) => p.pid),
      'SIGTERM',
    );
    await rm(dir, { recursive: true, force: true });
    removed.push(`${dir} (${procs.length} process(es) ended)`);
  }
  const named = new RegExp(`^${o.prefix}(\\d+)(-fill|-rest)?$`);
  const { cpuRoot, acctRoot } = v1Roots();
  const roots = o.cgroupRoots ?? [cpuRoot, acctRoot];
  const seen = new Set<string>();
  for (const root of roots) {
    if (!existsSync(root)) continue;
    const real = await realpath(root);
    if (seen.has(real)) continue;
    seen.add(real);
    for (const e of await readdir(real)) {
      const m = named.exec(e);
      if (!m || alive(Number(m[1]))) continue;
      const dir = join(real, e);
      await ended(await pidsIn(join(dir, 'cgroup.procs')), 'SIGKILL', 0);
      await rmdir(dir).catch(() => undefined);
      removed.push(existsSync(dir) ? `${dir} (could not be removed)` : dir);
    }
  }
  const shm = o.shm ?? '/dev/shm';
  const fifo = new RegExp(`^${o.prefix}(\\d+)-filler-`);
  for (const e of existsSync(shm) ? await readdir(shm) : []) {
    const m = fifo.exec(e);
    if (!m || alive(Number(m[1]))) continue;
    // /dev/shm is everyone's: only a directory of ours is a leftover of ours.
    const s = await lstat(join(shm, e)).catch(() => undefined);
    if (!s?.isDirectory() || s.uid !== uid) continue;
    await rm(join(shm, e), { recursive: true, force: true });
    removed.push(join(shm, e));
  }
  return removed;
};
