// perf/emulation-bursts.ts's worker: bursts of CPU work after idle gaps, each timed (wall clock)
// and the time the emulation's cgroup held it back read around it (cpu.stat's throttled_time).
// Two kinds of burst, taken in turn: `compute` spins without a system call (as a query's
// expression evaluation or the product's benchmark does), `kernel` spins the same loop and enters
// the kernel every ~50 us (getrusage, as work that reads or writes does).
//
//   node burst-child.mjs '<json: works (ms), repetitions, gapMs, spread, statPath>'
//
// Each gap is drawn uniformly within `spread` of gapMs either side (0: exactly gapMs).
//
// Calibrates both loops before it is moved into the group, prints `ready <json>`, waits for a line
// on stdin (it has been moved), runs, and prints one JSON line: per kind and work, [loss ms, held ms]
// for each burst.
import { readFileSync } from 'node:fs';

const o = JSON.parse(process.argv[2] ?? '{}');
const word = new Int32Array(new SharedArrayBuffer(4));
let sink = 0;
const KERNEL_EVERY_US = 50;
const loop = (n, every) => {
  for (let i = 0; i < n; i++) {
    sink = (sink * 31 + i) | 0;
    if (every && i % every === 0) process.cpuUsage();
  }
};
/** Iterations per ms of a loop, over 200 ms of it (the best of three). */
const perMs = (every) => {
  loop(1e6, every);
  let best = 0;
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    loop(4e7 / (every ? 2 : 1), every);
    best = Math.max(best, 4e7 / (every ? 2 : 1) / (performance.now() - t0));
  }
  return best;
};
const compute = perMs(0);
// Iterations between two kernel entries: KERNEL_EVERY_US of the plain loop's speed.
const every = Math.max(1, Math.round((compute * KERNEL_EVERY_US) / 1000));
const kernel = perMs(every);
const held = () => Number(/^throttled_time (\d+)/m.exec(readFileSync(o.statPath, 'utf8'))?.[1] ?? 0) / 1e6;

process.stdout.write(`ready ${JSON.stringify({ compute, kernel, every })}\n`);
process.stdin.once('data', () => {
  const out = { compute: {}, kernel: {} };
  for (let r = 0; r < o.repetitions; r++)
    for (const w of o.works)
      for (const kind of ['compute', 'kernel']) {
        Atomics.wait(word, 0, 0, o.gapMs * (1 - (o.spread ?? 0) + 2 * (o.spread ?? 0) * Math.random()));
        const h0 = held();
        const t0 = performance.now();
        if (kind === 'compute') loop(Math.round(w * compute), 0);
        else loop(Math.round(w * kernel), every);
        const t1 = performance.now();
        const h1 = held();
        out[kind][w] = [...(out[kind][w] ?? []), [t1 - t0 - w, h1 - h0]];
      }
  process.stdout.write(`${JSON.stringify({ out, sink })}\n`);
  process.exit(0);
});
