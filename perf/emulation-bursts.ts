/**
 * What perf:workload's emulated plans do to short work (a script, not a test; needs root and cgroup
 * v1 cpu + cpuacct): under each ramp plan (emulation.ts, its controller and busy filler as
 * perf:workload runs them), bursts of CPU work of a few sizes after idle gaps long enough for the
 * quota to fall, each timed and the time the quota held it back read around it. Two kinds of burst
 * in turn: one that spins without a system call (a query's expression evaluation, the product's
 * benchmark) and the same loop entering the kernel every ~50 us. Beside them, what a clock at the
 * plan's low fraction would add to the same work (w x (1/f - 1), before the ramp lifts it).
 *
 * The kernel charges a running task's CPU to its group's quota when it updates the task's runtime:
 * at the scheduler tick (4 ms at HZ=250) or when the task enters the scheduler, a system call that
 * reads its CPU time being one. A loop that never enters the kernel overruns its quota until the
 * tick, so whether a burst shorter than a tick is held back at all depends on where the tick falls;
 * what a burst of less than ~4 ms loses under the emulation depends on how the work enters the
 * kernel, which a clock does not (docs/BENCHMARK.md).
 *
 * Each gap is drawn within the product's benchmark's spread of its length (GAP_SPREAD), so that the
 * bursts start at every phase of the quota's period; `--gaps exact` waits exactly --gap-ms, and
 * every burst then starts at about the same phase, which decides what short work loses.
 *
 *   npm run perf:emulation-bursts -- [--works 1,2,2.5,3,4,5,8] [--repetitions 30] [--gap-ms 200] [--gaps spread|exact]
 *
 * The workload's bursts run on CPU 0 and the emulation's controller on the last CPU, as in
 * perf:workload. Exit code 2 when the machine cannot emulate (no root, no cgroup v1 cpu).
 */
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { GAP_SPREAD } from '../src/bench/worker-source.ts';
import { perfArgs } from './lib/args.ts';
import { type ControllerCounts, describePlan, PLANS, planGroup } from './lib/emulation.ts';
import { footer, header, median } from './lib/machine.ts';
import { onCpu, repoRoot } from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    works: { type: 'string', default: '1,2,2.5,3,4,5,8' },
    repetitions: { type: 'string', default: '30' },
    'gap-ms': { type: 'string', default: '200' },
    gaps: { type: 'string', default: 'spread' },
  },
});
const works = values.works.split(',').map(Number);
const repetitions = Number(values.repetitions);
const gapMs = Number(values['gap-ms']);
const gaps = values.gaps;
if (
  works.some((w) => !(w > 0)) ||
  !(repetitions >= 1) ||
  !(gapMs >= 0) ||
  !['spread', 'exact'].includes(gaps)
) {
  process.stderr.write(
    'emulation-bursts.ts: --works takes sizes in ms above 0, --repetitions 1 or more, --gap-ms 0 or more, --gaps spread or exact\n',
  );
  process.exit(2);
}
const spread = gaps === 'spread' ? GAP_SPREAD : 0;
const cpus = availableParallelism();
const workloadCpu = cpus >= 2 ? 0 : undefined;
const controllerCpu = cpus >= 2 ? cpus - 1 : undefined;
const ramps = PLANS.filter((p) => p.ramp);

type Bursts = Record<'compute' | 'kernel', Record<string, [number, number][]>>;
type Measured = { bursts: Bursts; counts: ControllerCounts };

/** One plan's bursts: the child calibrated outside the group, moved in, then run. */
const measure = async (plan: (typeof ramps)[number]): Promise<Measured> => {
  const name = `powerplan-bursts-${process.pid}`;
  const group = await planGroup(name, controllerCpu, {
    filler: true,
    ...(workloadCpu !== undefined ? { workloadCpu } : {}),
  });
  try {
    const [cmd, ...args] = onCpu(
      [
        process.execPath,
        join(repoRoot, 'perf/lib/burst-child.mjs'),
        JSON.stringify({ works, repetitions, gapMs, spread, statPath: group.statPath }),
      ],
      workloadCpu,
    );
    const child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const ready = (await lines.next()).value as string | undefined;
    if (!ready?.startsWith('ready ')) throw new Error(`the burst child said ${ready ?? 'nothing'}`);
    await group.adopt(child.pid!);
    const stop = await group.apply(plan);
    let bursts: Bursts;
    try {
      child.stdin!.write('go\n');
      const result = (await lines.next()).value as string | undefined;
      if (!result) throw new Error('the burst child ended without its figures');
      bursts = (JSON.parse(result) as { out: Bursts }).out;
    } catch (e) {
      await stop();
      throw e;
    }
    return { bursts, counts: await stop() };
  } finally {
    await group.remove();
  }
};

header('Short work under the emulated plans: bursts that never enter the kernel, and bursts that do');
console.log(
  `- ${repetitions} bursts of each size and kind, each after ${spread ? `${gapMs} ms idle +-${spread * 100}% (drawn uniformly)` : `exactly ${gapMs} ms idle`}; loss = wall time - work, held = the quota's throttled_time over the burst (mean over bursts, ms)`,
);
for (const plan of ramps) {
  const r = plan.ramp!;
  console.log(`\n## ${plan.name}: ${describePlan(plan)}\n`);
  let bursts: Bursts;
  try {
    const m = await measure(plan);
    bursts = m.bursts;
    console.log(
      `The controller: quota dropped ${m.counts.drops}x, lifted ${m.counts.lifts}x, written again ${m.counts.refalls}x, runnable tasks charged between ticks ${m.counts.charges}x\n`,
    );
  } catch (e) {
    process.stderr.write(`emulation-bursts.ts: ${(e as Error).message}\n`);
    process.exit(2);
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const cell = (xs: [number, number][]) =>
    `${mean(xs.map((x) => x[0])).toFixed(2)} (median ${median(xs.map((x) => x[0])).toFixed(2)}) / ${mean(xs.map((x) => x[1])).toFixed(2)}`;
  console.log(
    '| work ms | no system call: loss (median) / held | a system call every ~50 us: loss (median) / held | a clock at the low fraction |',
  );
  console.log('|---|---|---|---|');
  for (const w of works)
    console.log(
      `| ${w} | ${cell(bursts.compute[w] ?? [])} | ${cell(bursts.kernel[w] ?? [])} | ${(w * (100 / r.lowPercent - 1)).toFixed(2)} |`,
    );
}
footer();
