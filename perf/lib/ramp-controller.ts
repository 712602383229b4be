/**
 * The emulated plan's controller, run as its own process outside the emulation's cgroup (so its
 * own polling is not the workload's): it polls the group's cpuacct.usage every `pollUs` and, like
 * a power-saving clock, lowers the group's CFS quota to `lowPercent` of one CPU once the group has
 * used no CPU for `idleMs`, and lifts it again once the group has been busy for `busyMs` of wall
 * time (a pause longer than throttling explains, `pauseMs`, ends a busy stretch before the ramp).
 *
 *   node --import tsx ramp-controller.ts '<json: usagePath, quotaPath, periodUs, lowPercent, idleMs, busyMs, pollUs>'
 *
 * With `fillerFifo` it writes a byte to that FIFO whenever the group used CPU while its quota is
 * low: the wake-up of the busy filler (slow-clock-filler.py), which keeps the workload's CPU busy
 * while the group is throttled. A running task's usage is only brought up to date when it stops
 * (a throttling, the end of a burst) or at a tick, so the filler is woken just after the burst's
 * first throttling, and once more after its end, when it finds nothing runnable and sleeps again.
 * (Waking it whenever a task of the group is runnable, before the first throttling, added more
 * wake-ups of the workload's CPU than it saved: 85-99 a second against 63-71 for the 10 ms query
 * at 200 ms gaps. cpu.stat's nr_throttled cannot tell either: it counts periods, at their end.)
 *
 * It prints `ready` once polling; on SIGTERM it lifts the quota and prints its counters as JSON (drops, lifts) before exiting.
 */
import { closeSync, constants, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';

interface Args {
  usagePath: string;
  quotaPath: string;
  periodUs: number;
  lowPercent: number;
  idleMs: number;
  busyMs: number;
  pollUs: number;
  fillerFifo?: string;
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
const usage = () => readFileSync(a.usagePath, 'utf8');

let low = false;
let drops = 0;
let lifts = 0;
let last = usage();
let now = performance.now();
let lastActive = now;
let busySince: number | null = null;
let stopping = false;

const setQuota = (quota: string) => writeFileSync(a.quotaPath, quota);
// Non-blocking: a filler that is already spinning leaves its bytes unread, and a full FIFO is fine.
const filler = a.fillerFifo ? openSync(a.fillerFifo, constants.O_WRONLY | constants.O_NONBLOCK) : null;
const one = Buffer.from([1]);
const wakeFiller = () => {
  if (filler === null) return;
  try {
    writeSync(filler, one);
  } catch {
    // EAGAIN: the FIFO is full, the filler has its wake-up.
  }
};
process.on('SIGTERM', () => {
  stopping = true;
});

setQuota('-1');
process.stdout.write('ready\n');
const tick = () => {
  for (let i = 0; i < 2000 && !stopping; i++) {
    Atomics.wait(word, 0, 0, a.pollUs / 1000);
    now = performance.now();
    const u = usage();
    const active = u !== last;
    last = u;
    if (!low) {
      if (active) lastActive = now;
      else if (now - lastActive >= a.idleMs) {
        setQuota(lowQuota);
        low = true;
        drops++;
        busySince = null;
      }
      continue;
    }
    if (active) {
      if (busySince === null || now - lastActive > pauseMs) busySince = now;
      lastActive = now;
      wakeFiller();
    } else if (now - lastActive > pauseMs) busySince = null; // the stretch ended before the ramp
    if (busySince !== null && now - busySince >= a.busyMs) {
      setQuota('-1');
      low = false;
      lifts++;
      lastActive = now;
    }
  }
  if (stopping) {
    setQuota('-1');
    if (filler !== null) closeSync(filler);
    process.stdout.write(`${JSON.stringify({ drops, lifts })}\n`);
    process.exit(0);
  }
  // Back to the event loop now and then, so that SIGTERM is seen.
  setImmediate(tick);
};
tick();
