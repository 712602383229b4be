/**
 * The wake-up probe checked against cyclictest in the same run (a script, not a test): for each
 * condition, the product's probe (the benchmark's `wake` phase, in a worker thread, pinned with
 * taskset) and cyclictest (one SCHED_OTHER thread, pinned to the same CPU, --laptop so it leaves
 * PM QoS alone) measure the timer overshoot after the same gaps, one after the other. Conditions:
 *
 * - `idle`: the machine as it is;
 * - `dma-latency-0`: a helper holds /dev/cpu_dma_latency open with 0, which forbids every idle
 *   state but polling (what tuned's latency profiles do); needs root;
 * - `busy-sibling`: a busy process pinned to the same CPU, so every wake-up waits for the scheduler.
 *
 * Checks, printed with the figures: our p50 and p99 overshoot within the stated tolerance of
 * cyclictest's under each condition, and each condition moving both the same way as against `idle`.
 * Exit code 1 when a check fails.
 *
 *   npm run perf:wakeup -- [--cpu 1] [--gaps 100,1000,10000] [--samples 400] [--conditions idle,dma-latency-0,busy-sibling]
 */
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import type { RawRun } from '../src/bench/analysis.ts';
import { percentiles } from '../src/bench/analysis.ts';
import { runCommand } from '../src/lib/run-command.ts';
import { perfArgs } from './lib/args.ts';
import { type CyclictestResult, mergeCyclictest, runCyclictest } from './lib/cyclictest.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    cpu: { type: 'string', default: String(Math.max(0, availableParallelism() - 1)) },
    gaps: { type: 'string', default: '100,1000,10000' },
    samples: { type: 'string', default: '400' },
    chunks: { type: 'string', default: '4' },
    conditions: { type: 'string', default: 'idle,dma-latency-0,busy-sibling' },
  },
});
const cpu = Number(values.cpu);
const gaps = values.gaps.split(',').map(Number);
const samples = Number(values.samples);
/** The two tools alternate in this many chunks, so background load falls on both alike. */
const chunks = Math.max(1, Number(values.chunks));
const conditions = values.conditions.split(',');

/** The tolerance stated in docs/BENCHMARK.md: JavaScript adds a few microseconds per wake-up. */
const TOLERANCE = { p50AbsUs: 40, p50Rel: 0.5, p99AbsUs: 200, p99Rel: 3.0 };
/** A move counts when it is larger than this (us + share of the idle figure); smaller is noise here. */
const MOVE = { absUs: 20, rel: 0.25 };
const within = (ours: number, ref: number, abs: number, rel: number) =>
  Math.abs(ours - ref) <= abs + rel * ref;

const probe = async (rounds: number): Promise<NonNullable<RawRun['wake']>> => {
  const child = join(import.meta.dirname, 'lib', 'wake-child.ts');
  const r = await runCommand(
    'taskset',
    ['-c', String(cpu), process.execPath, '--import', 'tsx', child, JSON.stringify({ gapsUs: gaps, rounds })],
    { timeoutMs: 120_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  );
  if (r.exitCode !== 0) throw new Error(`the probe failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
};

/** Starts what makes the condition and answers how to stop it. */
const setUp = async (condition: string): Promise<() => Promise<void>> => {
  if (condition === 'idle') return async () => {};
  if (condition === 'dma-latency-0') {
    const fh = await open('/dev/cpu_dma_latency', 'w');
    await fh.write(Buffer.alloc(4));
    return () => fh.close();
  }
  if (condition === 'busy-sibling') {
    const spinner = spawn('taskset', ['-c', String(cpu), process.execPath, '-e', 'for(;;){}'], {
      stdio: 'ignore',
    });
    await new Promise((r) => setTimeout(r, 200));
    return async () => {
      spinner.kill('SIGKILL');
      await new Promise((r) => spinner.once('exit', r));
    };
  }
  throw new Error(`unknown condition ${condition}`);
};

interface Row {
  condition: string;
  gapUs: number;
  ours: { p50: number; p99: number; max: number };
  ref: CyclictestResult;
}

const rows: Row[] = [];
console.log(
  `wake-up probe vs cyclictest on CPU ${cpu}; gaps ${gaps.join(', ')} us; ${samples} samples each; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const condition of conditions) {
  const stop = await setUp(condition);
  try {
    const ours = new Map<number, number[]>(gaps.map((g) => [g, []]));
    const refs = new Map<number, CyclictestResult[]>(gaps.map((g) => [g, []]));
    const per = Math.ceil(samples / chunks);
    for (let c = 0; c < chunks; c++) {
      const run = await probe(per);
      for (const g of run.gaps) ours.get(g.gapUs)?.push(...g.overshootUs);
      for (const gapUs of gaps)
        refs.get(gapUs)?.push(await runCyclictest({ intervalUs: gapUs, loops: per, cpu }));
    }
    for (const gapUs of gaps) {
      const p = percentiles(
        (ours.get(gapUs) ?? []).map((x) => Math.max(0, x)),
        'us',
        1,
      );
      rows.push({ condition, gapUs, ours: p, ref: mergeCyclictest(refs.get(gapUs) ?? []) });
    }
  } finally {
    await stop();
  }
}

const failures: string[] = [];
console.log(
  `\n| condition | gap | ours p50 / p99 / max (us) | cyclictest p50 / p99 / max (us) | within tolerance |`,
);
console.log('|---|---|---|---|---|');
for (const r of rows) {
  const ok50 = within(r.ours.p50, r.ref.p50, TOLERANCE.p50AbsUs, TOLERANCE.p50Rel);
  const ok99 = within(r.ours.p99, r.ref.p99, TOLERANCE.p99AbsUs, TOLERANCE.p99Rel);
  if (!ok50) failures.push(`${r.condition} ${r.gapUs} us: p50 ${r.ours.p50} vs ${r.ref.p50}`);
  if (!ok99) failures.push(`${r.condition} ${r.gapUs} us: p99 ${r.ours.p99} vs ${r.ref.p99}`);
  console.log(
    `| ${r.condition} | ${r.gapUs} us | ${r.ours.p50} / ${r.ours.p99} / ${r.ours.max} | ${r.ref.p50} / ${r.ref.p99} / ${r.ref.max} | ${ok50 ? 'p50 yes' : 'p50 NO'}, ${ok99 ? 'p99 yes' : 'p99 NO'} |`,
  );
}
console.log('\nDirection against idle (p50 at each gap: both must move the same way):');
for (const condition of conditions.filter((c) => c !== 'idle')) {
  for (const gapUs of gaps) {
    const base = rows.find((r) => r.condition === 'idle' && r.gapUs === gapUs);
    const now = rows.find((r) => r.condition === condition && r.gapUs === gapUs);
    if (!base || !now) continue;
    const d = now.ours.p50 - base.ours.p50;
    const dr = now.ref.p50 - base.ref.p50;
    const moved = (x: number, b: number) => Math.abs(x) > MOVE.absUs + MOVE.rel * b;
    // Either tool's significant move must be matched in sign by the other; two small moves are both noise.
    const same =
      (!moved(d, base.ours.p50) && !moved(dr, base.ref.p50)) || (Math.sign(d) === Math.sign(dr) && d !== 0);
    if (!same)
      failures.push(`${condition} ${gapUs} us moved ours ${d.toFixed(1)} us, cyclictest ${dr.toFixed(1)} us`);
    console.log(
      `  ${condition.padEnd(14)} ${String(gapUs).padStart(6)} us: ours ${d >= 0 ? '+' : ''}${d.toFixed(1)} us, cyclictest ${dr >= 0 ? '+' : ''}${dr.toFixed(1)} us ${same ? (moved(dr, base.ref.p50) ? 'same way' : 'neither beyond noise') : 'DIFFERENT'}`,
    );
  }
}
console.log(
  `\nTolerance: p50 within ${TOLERANCE.p50AbsUs} us + ${TOLERANCE.p50Rel * 100}% of cyclictest's, p99 within ${TOLERANCE.p99AbsUs} us + ${TOLERANCE.p99Rel * 100}%; a move counts above ${MOVE.absUs} us + ${MOVE.rel * 100}%. Load at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
if (failures.length) {
  console.log(`FAILED: ${failures.join('; ')}`);
  process.exitCode = 1;
} else console.log('all checks passed');
