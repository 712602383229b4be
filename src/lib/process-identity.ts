/**
 * Who a process is, well enough to tell a live lock holder from a dead one whose pid was reused:
 * its pid, its start time as the kernel records it (Linux: field 22 of /proc/<pid>/stat), and a
 * random id of this instance. The one place that asks whether a process is alive.
 *
 * A container restarted after SIGKILL runs the new service as pid 1 again: a lock naming pid 1
 * with another instance id was left by the previous instance and is stale. Where no start time
 * can be read (Windows, without a native module), a holder proves it is alive by refreshing its
 * lock file (see file-lock.ts), so a reused pid is stale after the stale time.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface ProcessIdentity {
  pid: number;
  /** The kernel's start time of the process (clock ticks since boot on Linux); null when unknown. */
  start: string | null;
  /** Random per process: no other process, before or after, has the same. */
  instance: string;
}

/** The start time of process `pid`, or null when it cannot be read (no /proc, not Linux, gone). */
export const processStart = (pid: number): string | null => {
  if (process.platform !== 'linux') return null;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid ... starttime ...": comm may hold spaces and ')', so count fields after
  // the last ')'. The first of them is field 3; starttime is field 22.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
};

/** True when a process with this pid exists (EPERM: it exists but belongs to someone else). */
export const processAlive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** This process. */
export const thisProcess: ProcessIdentity = Object.freeze({
  pid: process.pid,
  start: processStart(process.pid),
  instance: randomUUID(),
});

/**
 * Whether the process a record names is this one, another live one, or gone (dead, or its pid
 * now belongs to a process that started later, or it is this pid in an earlier instance).
 */
export const holderState = (
  holder: { pid: number; start?: string | null | undefined; instance?: string | undefined },
  me: ProcessIdentity = thisProcess,
): 'this-process' | 'alive' | 'gone' => {
  if (holder.pid === me.pid) return holder.instance === me.instance ? 'this-process' : 'gone';
  if (!processAlive(holder.pid)) return 'gone';
  if (holder.start) {
    const now = processStart(holder.pid);
    if (now !== null && now !== holder.start) return 'gone';
  }
  return 'alive';
};
