/**
 * The emulated plan's controller, run as its own process outside the emulation's cgroup (so its
 * own polling is not the workload's): it polls the group's cpuacct.usage every `pollUs` and, like
 * a power-saving clock, lowers the group's CFS quota to `lowPercent` of one CPU once the group has
 * used at most `quietPercent` of a CPU over the last `idleMs` (a clock answers to utilisation: a
 * server's background blips, a writer waking for 100 us, hold no real clock up, where counted as
 * usage they would keep the quota lifted through waits the product's benchmark, whose idle gaps
 * have no such blips, finds it lowered in), and lifts it again once the group has been busy for
 * `busyMs` of wall time (a pause longer than `pauseMs` ends a busy stretch before the ramp). Busy
 * is having work: using CPU, or being held back by the quota (cpu.stat's nr_throttled counts every
 * period the group spends throttled), as a task on a slow clock would be running. A task that
 * overruns its quota until the next scheduler tick is held back for as many periods as it overran
 * (12-16 ms at 25% of a 4 ms period, HZ=250), longer than a stretch could pause if only the CPU used
 * counted. Fallen, once the group has worked and is quiet again as for a fall, it writes the low
 * quota again, which clears the runtime the group had stored (`fresh` below), so that every burst
 * after a quiet stretch starts as after the fall.
 *
 *   node --import tsx ramp-controller.ts '<json: usagePath, quotaPath, periodUs, lowPercent, idleMs, busyMs, pollUs>'
 *
 * With `filler` it moves the busy filler (slow-clock-filler.py), which keeps the workload's CPU busy
 * while the group is throttled, into its filling cgroup whenever the group used CPU or was held back
 * while its own quota is low, with a task runnable at the poll where the group's `tasks` are given,
 * and back into its resting cgroup (a quota it has used up) when the filler asks to through its
 * FIFO, having found nothing of the group runnable, and the controller finds none either: the
 * filler writes no cgroup file itself, since a move may sleep on a lock and a sleep would count as
 * a burst of work. Every few polls it writes the filler into the group it is in again, so that no
 * move is the first cgroup migration after a quiet stretch, which waits for an RCU grace period
 * (keepWarm, below).
 *
 * With `charge` (and the group's `tasks` file) it charges the group's runnable tasks to the quota at every
 * poll while the quota is low, not only at the scheduler tick (runnable, below).
 *
 * It prints `ready` once polling; on SIGTERM it lifts the quota and prints its counters as JSON
 * (drops, lifts, refalls: the quota written again after work while fallen; charges: tasks charged
 * between ticks) before exiting.
 */
import { closeSync, constants, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';

interface Args {
  usagePath: string;
  /** cpu.stat of the group: nr_throttled grows each period the group is held back. */
  statPath?: string;
  quotaPath: string;
  periodUs: number;
  lowPercent: number;
  idleMs: number;
  /** The most CPU (% of one) the group may use over `idleMs` for the quota to drop; 0 by default. */
  quietPercent?: number;
  busyMs: number;
  pollUs: number;
  /** The group's tasks file: copied for the filler, watched to be charged (listTasks). */
  tasks?: string;
  /**
   * The busy filler: its pid, the cgroup.procs of its filling and resting groups, its FIFO and the
   * file (on tmpfs) the filler reads the group's tasks from.
   */
  filler?: { pid: number; fill: string; rest: string; fifo: string; list: string };
  /** While the quota is low, the group's runnable tasks are charged every poll (runnable). */
  charge?: boolean;
}

const a = JSON.parse(process.argv[2] ?? '{}') as Args;
const lowQuota = String(Math.max(1000, Math.round((a.periodUs * a.lowPercent) / 100)));
/**
 * The usage of a task that keeps running is only brought up to date at the scheduler tick (4 ms at
 * HZ=250) or when it stops, and while throttled the group uses nothing for up to (1 - fraction) x
 * period: a pause shorter than two periods plus a tick is still the same busy stretch.
 */
const TICK_MS = 4;
const pauseMs = (2 * a.periodUs) / 1000 + TICK_MS;
const word = new Int32Array(new SharedArrayBuffer(4));
/** The group's CPU (ns) and its counters as one text (any change in either is activity). */
const usage = () => {
  const ns = readFileSync(a.usagePath, 'utf8');
  const throttled = a.statPath
    ? (/^nr_throttled (\d+)/m.exec(readFileSync(a.statPath, 'utf8'))?.[1] ?? '')
    : '';
  return { ns: Number(ns), key: ns + throttled };
};
/** The CPU (ns) the group may use over idleMs and still let the quota drop. */
const quietNs = ((a.quietPercent ?? 0) / 100) * a.idleMs * 1e6;
/**
 * The group's usage at the polls of the last idleMs, oldest first: the first one is the last poll
 * at least idleMs ago, once the controller has polled that long since the quota last dropped.
 */
const recent: { at: number; ns: number }[] = [];

let low = false;
/**
 * Whether the group has had no work since the quota was last written. Writing the quota resets the
 * runtime the group has stored: a CPU's leftover (up to 1 ms, min_cfs_rq_runtime, kept by a task
 * that goes to sleep) and a debt (a task that overran until the tick), while the global pool holds
 * one quota. Left alone, a burst after a wait in the fallen state starts with up to two quotas to
 * spend at full speed, or with a debt, where one after the fall starts with one: the same fallen
 * clock would treat short work by its history. So once the group is quiet again as for a fall, the
 * quota is written again: every burst after a quiet stretch starts as after the fall.
 */
let fresh = false;
let refalls = 0;
let drops = 0;
let lifts = 0;
let last = usage().key;
let now = performance.now();
let lastActive = now;
let busySince: number | null = null;
let stopping = false;

const setQuota = (quota: string) => writeFileSync(a.quotaPath, quota);
/** The low quota written (again): the clock down, the group's stored runtime gone. */
const fall = () => {
  setQuota(lowQuota);
  fresh = true;
};
/**
 * Moving the filler is a cgroup migration: done when the group's activity starts and the filler
 * rests; the activity's start, and every few polls while it lasts, drop a standing request to rest
 * (the pid already in the filling group is written again by keepWarm, below).
 * Where the group's tasks are watched (`runnable`), activity is a task of the group runnable at the
 * poll, not CPU used since the last one: a server's background blip (a writer waking for 50 us)
 * is over before a poll finds it, and a slow clock would only have slowed the blip, where a filler
 * moved in for it spins until it is moved out again, a poll or more each time, which the CPU's
 * counters add to the work's bursts.
 */
const WAKE_EVERY = 8;
let sinceWake = WAKE_EVERY;
let filling = false;
const wakeFiller = (starting: boolean) => {
  if (!a.filler || (!starting && filling && ++sinceWake < WAKE_EVERY)) return;
  sinceWake = 0;
  restAsked = false;
  if (filling) return;
  filling = true;
  writeFileSync(a.filler.fill, String(a.filler.pid));
};
/**
 * A cgroup migration waits for an RCU grace period (the cgroup threadgroup lock's switch to its
 * writer's mode) unless another came shortly before: on a 2-vCPU KVM guest of 2026-12-05 moves 2-10
 * ms apart took 0.1 ms, moves 50 and 200 ms apart 5.9 and 7.9 ms (medians of 40), through which
 * the controller does not poll and the filler stays where it was: it came 6-8 ms late to a
 * query after a quiet stretch, whose time held back it then left idle (in the PostgreSQL check the
 * filler ran 0.29-0.93 of the time the quota held the queries back, docs/BENCHMARK.md "Figures: the
 * controller's moves kept quick"). So the filler's pid is written
 * again into the group it is in every WARM_EVERY polls (a move to where it is changes nothing, but
 * takes the lock), and a move when the work comes is one a few ms after the last.
 */
const WARM_EVERY = 8;
let sinceWarm = 0;
const keepWarm = () => {
  if (!a.filler || ++sinceWarm < WARM_EVERY) return;
  sinceWarm = 0;
  writeFileSync(filling ? a.filler.fill : a.filler.rest, String(a.filler.pid));
};
/** The filler's requests to rest (a byte each), read without waiting. */
const asks = a.filler ? openSync(a.filler.fifo, constants.O_RDONLY | constants.O_NONBLOCK) : null;
const askBuffer = Buffer.alloc(64);
/**
 * A request to rest holds until the filler rests or is moved to fill again: one read in a poll that
 * saw the group active would otherwise be lost, and the filler asks again only a millisecond later.
 */
let restAsked = false;
/**
 * Moves the filler to rest when it asked to and the group has nothing to run: no task runnable at
 * this poll where the tasks are watched (the filler asks once it finds none, so it rests a poll
 * after the group's work ends), else no activity this poll.
 */
const restFiller = (idle: boolean) => {
  if (asks === null || !a.filler) return;
  try {
    if (readSync(asks, askBuffer, 0, askBuffer.length, null) > 0) restAsked = true;
  } catch {
    // EAGAIN: nothing asked.
  }
  if (restAsked && idle) {
    writeFileSync(a.filler.rest, String(a.filler.pid));
    restAsked = false;
    filling = false;
  }
};
/**
 * The group's tasks read every LIST_EVERY polls (50 ms): copied for the filler, replaced whole (a
 * rename), so that the filler reads no cgroup file, whose opening may sleep (slow-clock-filler.py);
 * and watched, to be charged (runnable, below) and to tell when the filler is needed (wakeFiller).
 */
const LIST_EVERY = Math.max(1, Math.round(50_000 / a.pollUs));
let sinceList = LIST_EVERY;
let listed = '';
const listTasks = () => {
  if (!a.tasks || (!a.filler && !a.charge) || ++sinceList < LIST_EVERY) return;
  sinceList = 0;
  const tasks = readFileSync(a.tasks, 'utf8');
  if (tasks === listed) return;
  if (a.filler) {
    writeFileSync(`${a.filler.list}.new`, tasks);
    renameSync(`${a.filler.list}.new`, a.filler.list);
  }
  listed = tasks;
  watch(tasks.split('\n').filter(Boolean).map(Number));
};
/**
 * The quota charged between ticks. The kernel charges a running task's CPU to its group's quota
 * when it brings the task's runtime up to date: at the scheduler tick (4 ms at HZ=250) or when the
 * task enters the kernel's scheduler, as a system call reading its CPU time does. Work that makes
 * no system call (a query's expression evaluation, the product's benchmark loop) overruns the
 * quota until the tick, so whether a burst shorter than a tick is held back at all depends on
 * where the tick falls, where a slow clock slows every instruction (perf:emulation-bursts: under
 * the slower ramp a 2 ms burst that never entered the kernel lost a median -0.02 ms, the same loop
 * entering it every 50 us 3.14 ms). So while the quota is low, every poll finds the group's
 * runnable tasks (state R in /proc/<tid>/stat, kept open) and sets each one's nice value one step
 * down and back (setpriority, as root): the kernel takes a task whose weight changes off its run
 * queue and back, which brings its runtime up to date and charges the quota, and holds the group
 * back there once it is spent. The resched this asks of the task's CPU finds it busy (with the
 * task, or the filler while the group is held back), never idle.
 */
const stats = new Map<number, number>();
const statBuffer = Buffer.alloc(512);
let charges = 0;
const watch = (tids: number[]) => {
  const now = new Set(tids);
  for (const [tid, fd] of stats)
    if (!now.has(tid)) {
      closeSync(fd);
      stats.delete(tid);
    }
  for (const tid of now)
    if (!stats.has(tid))
      try {
        stats.set(tid, openSync(`/proc/${tid}/stat`, 'r'));
      } catch {
        // Gone already.
      }
};
/**
 * How many of the group's tasks are runnable (state R: running, or held back by the quota), read
 * from the stat files kept open; with `charging`, each of them charged as above.
 */
const runnable = (charging: boolean): number => {
  let count = 0;
  for (const [tid, fd] of stats) {
    let text: string;
    try {
      text = statBuffer.toString('latin1', 0, readSync(fd, statBuffer, 0, statBuffer.length, 0));
    } catch {
      // The task has gone: its stat file reads as an error from then on.
      closeSync(fd);
      stats.delete(tid);
      continue;
    }
    // The state follows the command's closing parenthesis (a command may hold one itself); the
    // nice value is the 17th field after it.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'R') continue;
    count++;
    if (!charging) continue;
    const nice = Number(fields[16]);
    try {
      // Down a step first: that needs the privilege the step back does not, so a controller
      // without it changes nothing (at -20, the lowest, up and back: only root sets a task there).
      setPriority(tid, nice <= -20 ? nice + 1 : nice - 1);
      setPriority(tid, nice);
      charges++;
    } catch {
      // Gone between the read and the call, or no privilege.
    }
  }
  return count;
};
const PARENT = process.ppid;
process.on('SIGTERM', () => {
  stopping = true;
});

setQuota('-1');
listTasks();
process.stdout.write('ready\n');
const tick = () => {
  for (let i = 0; i < 2000 && !stopping; i++) {
    Atomics.wait(word, 0, 0, a.pollUs / 1000);
    now = performance.now();
    const u = usage();
    const active = u.key !== last;
    last = u.key;
    listTasks();
    // Where the tasks are watched, whether any is runnable (and charged while the quota is low).
    const ready = stats.size && (a.filler || (low && a.charge)) ? runnable(low && a.charge === true) : null;
    restFiller(ready === null ? !active : ready === 0);
    keepWarm();
    recent.push({ at: now, ns: u.ns });
    while (recent.length > 1 && now - recent[1]!.at >= a.idleMs) recent.shift();
    const quiet = now - recent[0]!.at >= a.idleMs && u.ns - recent[0]!.ns <= quietNs;
    if (!low) {
      if (active) lastActive = now;
      if (quiet) {
        fall();
        low = true;
        drops++;
        busySince = null;
        recent.length = 0;
      }
      continue;
    }
    if (active) fresh = false;
    else if (quiet && !fresh) {
      fall();
      refalls++;
    }
    if (active) {
      if (busySince === null || now - lastActive > pauseMs) busySince = now;
      if (ready !== 0) wakeFiller(now - lastActive > a.pollUs / 1000 + 0.1);
      lastActive = now;
    } else if (now - lastActive > pauseMs) busySince = null; // the stretch ended before the ramp
    if (busySince !== null && now - busySince >= a.busyMs) {
      setQuota('-1');
      low = false;
      lifts++;
      lastActive = now;
    }
  }
  // Its starter gone (killed, or exited on a signal while its run went on to start this plan):
  // the quota lifted and the controller ended as on SIGTERM, not left polling for good.
  if (process.ppid !== PARENT) stopping = true;
  if (stopping) {
    setQuota('-1');
    process.stdout.write(`${JSON.stringify({ drops, lifts, refalls, charges })}\n`);
    process.exit(0);
  }
  // Back to the event loop now and then, so that SIGTERM is seen.
  setImmediate(tick);
};
tick();
