/**
 * The work's own bursts, read passively from procfs: per process, its CPU time, the times it went
 * to sleep of its own accord (each ends a burst of its work) and the CPU it last ran on. A wake-up
 * that carries no work (a timer, an interrupt, a tick) ends no burst, so these say how often work,
 * not the CPU, woke; docs/ADVICE.md, "Work bursts", has why the estimate needs that.
 *
 * Cost per read: one directory listing of /proc, then one `pread` per process of a kept-open
 * /proc/<pid>/schedstat (sub-microsecond kernel work), and two more (`status`, `stat`) only for
 * the processes that ran since the last read: a process that did not run cannot have gone to
 * sleep, so its count from the last read still holds. Bounded: at most MAX_TASKS processes are
 * watched (3 descriptors each): at each read the newest that can be read, an older one closed
 * when a newer one takes its place; the observation says how much of the busy time
 * they cover. Measured: about 5 us per process and read (docs/ADVICE.md, "Work bursts").
 * Threads other than a process's first are not read (a threaded server's workers are left out,
 * and the coverage shows it).
 *
 * Grammar of the lines read:
 *   /proc/<pid>/schedstat  `<run ns> <wait ns> <timeslices>`
 *   /proc/<pid>/status     a line `voluntary_ctxt_switches:\t<n>`
 *   /proc/<pid>/stat       `<pid> (<comm>) <state> ...`, field 22 its start (USER_HZ ticks since boot), field 39 the CPU last run on
 */
import { closeSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskCounters } from '../../domain/workload.ts';
import { preadText } from './kept-files.ts';

/** The most processes watched at once; the rest are left out of the observation. */
export const MAX_TASKS = 256;

/** USER_HZ: the unit of /proc/stat and of a process's start time, 100 on every Linux architecture the kernel exports it for. */
export const USER_HZ = 100;

/** Run time (ns) from a schedstat line; null when the text is not one. */
export const parseSchedstatRunNs = (text: string): number | null => {
  const m = /^(\d+) \d+ \d+\s*$/.exec(text);
  return m ? Number(m[1]) : null;
};

/** The voluntary context switches a status file counts; null without the line. */
export const parseVoluntarySwitches = (text: string): number | null => {
  const m = /^voluntary_ctxt_switches:\s*(\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) : null;
};

/** Field `n` (1-based, as proc(5) numbers them) of a stat line as a number; the name in parentheses may hold spaces and parentheses. */
const statField = (text: string, n: number): number | null => {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  // After the name: field 3 (state) is the first.
  const v = text
    .slice(close + 1)
    .trim()
    .split(/\s+/)[n - 3];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : null;
};

/** The CPU a stat line says the process last ran on (field 39). */
export const parseStatCpu = (text: string): number | null => statField(text, 39);

/** When a stat line says the process started (field 22, USER_HZ ticks since boot), in seconds since boot. */
export const parseStatStartS = (text: string): number | null => {
  const ticks = statField(text, 22);
  return ticks === null ? null : ticks / USER_HZ;
};

interface Watched {
  sched: number;
  status: number;
  stat: number;
  counters: TaskCounters;
}

const closeAll = (w: Watched) => {
  for (const fd of [w.sched, w.status, w.stat])
    try {
      closeSync(fd);
    } catch {
      /* already gone */
    }
};

const openTask = (procfsRoot: string, pid: number): Watched | null => {
  const fds: number[] = [];
  try {
    for (const f of ['schedstat', 'status', 'stat'])
      fds.push(openSync(join(procfsRoot, String(pid), f), 'r'));
  } catch {
    for (const fd of fds) closeSync(fd);
    return null;
  }
  const [sched, status, stat] = fds as [number, number, number];
  return { sched, status, stat, counters: { pid, runUs: -1, sleeps: 0, cpu: 0 } };
};

/** Reads status and stat anew; false when either is unreadable (the process is gone). */
const refresh = (w: Watched, runNs: number): boolean => {
  const sleeps = parseVoluntarySwitches(preadText(w.status) ?? '');
  const stat = preadText(w.stat) ?? '';
  const cpu = parseStatCpu(stat);
  if (sleeps === null || cpu === null) return false;
  const startS = parseStatStartS(stat);
  w.counters = {
    pid: w.counters.pid,
    runUs: Math.floor(runNs / 1000),
    sleeps,
    cpu,
    ...(startS !== null ? { startS } : {}),
  };
  return true;
};

/**
 * A reader of every process's counters, or null where procfs lists no process with a schedstat
 * (a kernel without CONFIG_SCHED_INFO, a procfs root without processes).
 */
export const createTaskReader = (procfsRoot: string, limit = MAX_TASKS): (() => TaskCounters[] | null) => {
  const watched = new Map<number, Watched>();
  return () => {
    let names: string[];
    try {
      names = readdirSync(procfsRoot);
    } catch {
      return null;
    }
    const present = new Set<number>();
    for (const n of names) if (/^\d+$/.test(n)) present.add(Number(n));
    // Newest first, so that past the limit the processes started last (a database's connections,
    // not the boot's daemons and kernel threads) are the ones watched.
    const order = [...present].sort((a, b) => b - a);
    for (const [pid, w] of watched)
      if (!present.has(pid)) {
        closeAll(w);
        watched.delete(pid);
      }
    const out: TaskCounters[] = [];
    for (const pid of order) {
      let w = watched.get(pid);
      // Past the limit an older process gives up its place to the newer ones: a connection opened
      // after the start is watched, not shut out while the boot's daemons live.
      if (out.length >= limit) {
        if (w) {
          closeAll(w);
          watched.delete(pid);
        }
        continue;
      }
      if (!w) {
        const opened = openTask(procfsRoot, pid);
        if (!opened) continue;
        w = opened;
        watched.set(pid, w);
      }
      const runNs = parseSchedstatRunNs(preadText(w.sched) ?? '');
      // A process that did not run since the last read cannot have slept since: its counts hold.
      const ran = runNs !== null && Math.floor(runNs / 1000) !== w.counters.runUs;
      if (runNs === null || (ran && !refresh(w, runNs))) {
        closeAll(w);
        watched.delete(pid);
        continue;
      }
      out.push(w.counters);
    }
    return out.length ? out : null;
  };
};
