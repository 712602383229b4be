/**
 * The code that runs inside each benchmark worker thread, kept as plain JavaScript source and
 * started with `new Worker(source, { eval: true })`: it then needs no TypeScript loader and no
 * file next to a bundle, and it is the same code under tsx, plain node and a single executable.
 *
 * Protocol: the main thread posts `{ seq, cmd, ...args }`, the worker answers `{ seq, ok, ... }`.
 * Idle gaps sleep in `Atomics.wait` on a shared word nobody notifies: the thread blocks in the
 * kernel with no timer or event loop tick, which is what a server waiting for a request does.
 */

/** Index of the shared Int32Array word the all-core workers wait on before starting together. */
export const START_SLOT = 0;
/** Index of the word idle gaps wait on (never notified: the wait always runs to its timeout). */
export const IDLE_SLOT = 1;
export const CONTROL_WORDS = 2;

/**
 * The bursts after idle and the request stream wait each gap drawn uniformly within this share of
 * its nominal length either side (0.15: 170-230 ms for 200 ms). A gap of always the same length
 * starts every burst at the same phase of whatever runs periodically beneath it (the scheduler's
 * tick, a governor's sampling period, a CPU quota's period) and measures that one phase, lucky or
 * not, where a workload's requests arrive at every phase. Under the PostgreSQL check's slower
 * emulated ramp (`npm run perf:emulation-bursts`, docs/BENCHMARK.md "The gaps spread"), 3 ms
 * bursts after exactly 200 ms lost a median of 7.73 ms, after gaps spread this way 5.65 ms.
 * Spread by a share of the gap, a longer gap covers a longer period; the ladder's gaps, about
 * sqrt(2) apart, keep their order.
 */
export const GAP_SPREAD = 0.15;

export const workerSource = `
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const control = new Int32Array(workerData.control);
const START_SLOT = ${START_SLOT};
const IDLE_SLOT = ${IDLE_SLOT};
const GAP_SPREAD = ${GAP_SPREAD};
let seed = (workerData.index * 2654435761) | 0;

// A dependent chain of multiply, xor and shift on 32-bit integers: every step needs the previous
// result, so it cannot be vectorised or folded, and it touches no memory.
function kernel(n, s) {
  let x = s | 1;
  for (let i = 0; i < n; i++) {
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d);
    x = (x ^ (x << 7) ^ i) | 0;
  }
  return x;
}

function unit(iterations) {
  seed = (seed + 0x9e3779b9) | 0;
  return kernel(iterations, seed);
}

function spin(ms, iterations) {
  let cs = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) cs ^= unit(iterations);
  return cs;
}

function timeUnits(iterations, units) {
  const times = new Array(units);
  let cs = 0;
  for (let i = 0; i < units; i++) {
    const t0 = performance.now();
    cs ^= unit(iterations);
    times[i] = performance.now() - t0;
  }
  return { times, cs };
}

// A gap of about gapMs (GAP_SPREAD either side), waited in the kernel; answers its length.
function idle(gapMs) {
  const ms = gapMs * (1 - GAP_SPREAD + 2 * GAP_SPREAD * Math.random());
  if (ms > 0) Atomics.wait(control, IDLE_SLOT, 0, ms);
  return ms;
}

function median(xs) {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const commands = {
  calibrate({ spinMs, targetMs }) {
    let cs = spin(spinMs, 10000);
    let n = 10000;
    while (n < 2e9) {
      const t0 = performance.now();
      cs ^= unit(n);
      if (performance.now() - t0 >= 5 * targetMs) break;
      n *= 2;
    }
    // Interference (an interrupt, another process) only ever adds time, so the fastest of a few
    // timings is the best estimate of the undisturbed warm core.
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      cs ^= unit(n);
      best = Math.min(best, performance.now() - t0);
    }
    n = Math.max(1000, Math.round((n * targetMs) / best));
    const measured = timeUnits(n, 15);
    return { iterations: n, unitMs: median(measured.times), checksum: (cs ^ measured.cs) | 0 };
  },

  warm({ spinMs, iterations, units, count }) {
    let cs = spin(spinMs, iterations);
    const bursts = [];
    for (let b = 0; b < count; b++) {
      const r = timeUnits(iterations, units);
      cs ^= r.cs;
      bursts.push(r.times);
    }
    return { bursts, checksum: cs | 0 };
  },

  // The wake-up probe: sleep gapUs in the kernel, note how late the thread woke (timer overshoot),
  // then time one small unit of work (what the first instructions of a request feel). The gaps are
  // interleaved round by round, and a warm reference of the same unit is timed after a spin.
  wake({ gapsUs, rounds, iterations, warmSpinMs }) {
    const gaps = gapsUs.map((gapUs) => ({ gapUs, overshootUs: [], firstUnitUs: [] }));
    let cs = 0;
    for (let r = 0; r < rounds; r++) {
      for (const g of gaps) {
        const t0 = performance.now();
        Atomics.wait(control, IDLE_SLOT, 0, g.gapUs / 1000);
        const t1 = performance.now();
        cs ^= unit(iterations);
        const t2 = performance.now();
        g.overshootUs.push((t1 - t0) * 1000 - g.gapUs);
        g.firstUnitUs.push((t2 - t1) * 1000);
      }
    }
    cs ^= spin(warmSpinMs, iterations);
    const warm = timeUnits(iterations, 40);
    return { warmUnitUs: warm.times.map((t) => t * 1000), gaps, checksum: (cs ^ warm.cs) | 0 };
  },

  // A stream of short requests: the same small burst again and again after about the same idle gap
  // (idle), as a server answering queries sees them. The first request, and those that start within leadMs of
  // the stream's start, only bring the clock to the state the stream leaves it in (from a fallen
  // clock a slow ramp takes several short requests to rise) and are not timed.
  stream({ gapMs, iterations, units, count, leadMs = 0 }) {
    const times = [];
    const gapsMs = [];
    let cs = 0;
    const start = performance.now();
    for (let i = 0; times.length < count; i++) {
      const gap = idle(gapMs);
      const t0 = performance.now();
      for (let k = 0; k < units; k++) cs ^= unit(iterations);
      if (i > 0 && t0 - start >= leadMs) {
        times.push(performance.now() - t0);
        gapsMs.push(gap);
      }
    }
    return { times, gapsMs, checksum: cs | 0 };
  },

  burst({ idleMs, iterations, units }) {
    const waitedMs = idle(idleMs);
    const r = timeUnits(iterations, units);
    return { times: r.times, waitedMs, checksum: r.cs | 0 };
  },

  sustain({ iterations, warmupMs, durationMs, sliceMs, together }) {
    if (together) {
      parentPort.postMessage({ ready: true });
      Atomics.wait(control, START_SLOT, 0, 10000);
    }
    let cs = spin(warmupMs, iterations);
    const slices = [];
    let units = 0;
    let inSlice = 0;
    const t0 = performance.now();
    let sliceEnd = t0 + sliceMs;
    let now = t0;
    while (now - t0 < durationMs) {
      cs ^= unit(iterations);
      units++;
      inSlice++;
      now = performance.now();
      // A unit can span several slices (the thread was descheduled): those slices did nothing.
      while (now >= sliceEnd) {
        slices.push(inSlice);
        inSlice = 0;
        sliceEnd += sliceMs;
      }
    }
    return { units, elapsedMs: now - t0, slices, checksum: cs | 0 };
  },
};

parentPort.on('message', (msg) => {
  try {
    const out = commands[msg.cmd](msg);
    parentPort.postMessage({ seq: msg.seq, ok: true, ...out });
  } catch (e) {
    parentPort.postMessage({ seq: msg.seq, ok: false, error: String(e && e.stack || e) });
  }
});
`;
