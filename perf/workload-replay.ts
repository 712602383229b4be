/**
 * perf:workload's figures again from a recorded run (its --json), with the model as it is now:
 * every run's observation and the benchmarks it was estimated with (the plan's, and the newest
 * under a performance plan, as the product looks it up) are in the file, so a change to the model
 * is checked against the same measurements without running the database again.
 *
 *   npm run perf:workload-replay -- run.json [--verbose]
 *   npm run perf:workload-replay -- --resample [--rounds 3] run.json [more.json ...]
 *
 * Exit code 1 when the goal is missed (as perf:workload).
 *
 * --resample: how likely a run of --rounds rounds is to meet the goal, from the rounds recorded in
 * the files (replayed with the model as it is now): for each emulated condition, the chance that
 * the median estimate of that many rounds drawn from its recorded ones (with replacement, 4,000
 * times, a fixed seed) is within the goal of their median held share, and the product of those
 * chances (the conditions taken as independent). The rounds of runs of different code of the
 * emulation are pooled alike: name the files of one version.
 */
import { readFile } from 'node:fs/promises';
import { estimateWorkloadCost } from '../src/advice/workload-cost.ts';
import { costsFromBenchmark } from '../src/advice/workload-costs.ts';
import type { BenchmarkResult } from '../src/domain/benchmark.ts';
import type { WorkloadObservation } from '../src/domain/workload.ts';
import { perfArgs } from './lib/args.ts';
import type { Run } from './lib/workload-run.ts';
import { conditions, misranked, NONE, resample, table, withinGoal } from './lib/workload-table.ts';

const { values, positionals } = perfArgs(import.meta.filename, {
  allowPositionals: true,
  options: {
    verbose: { type: 'boolean', default: false },
    resample: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
  },
});
if (!positionals.length) {
  process.stderr.write('workload-replay.ts: name the --json file of a perf:workload run\n');
  process.exit(2);
}
const PERFORMANCE = new Set(['high-performance', 'ultimate-performance']);
const kindOf = (b: BenchmarkResult) => b.environment.activePlan?.plan?.kind ?? '';
/** A recorded run's runs, each estimated again from its observation with the model as it is now. */
const replay = async (file: string): Promise<Run[]> => {
  const recorded = JSON.parse(await readFile(file, 'utf8')) as {
    runs: Run[];
    benchmarks: Record<string, BenchmarkResult>;
  };
  /**
   * The benchmark under a performance plan for an estimate made with `b` where the recorded estimate
   * names none: the newest under one up to b (b itself under a performance plan).
   */
  const performanceFor = (b: BenchmarkResult): BenchmarkResult | undefined =>
    PERFORMANCE.has(kindOf(b))
      ? b
      : Object.values(recorded.benchmarks)
          .filter((x) => PERFORMANCE.has(kindOf(x)) && x.startedAt <= b.startedAt)
          .sort((x, y) => y.startedAt.localeCompare(x.startedAt))[0];
  /**
   * Runs recorded before the observation said whether a CPU's bursts are units (workInUnits) had
   * them counted all the same: there, a CPU with at least UNITS_PER_BUSY_MS bursts per millisecond
   * of its busy time is taken to have counted units (each unit is 1 ms of a process's CPU at most,
   * so units come near one per busy millisecond, where a query's sleeps are one per 2.5 ms or more).
   */
  const UNITS_PER_BUSY_MS = 0.4;
  const withUnits = (o: WorkloadObservation): WorkloadObservation =>
    o.perCpu.some((c) => c.workInUnits !== undefined)
      ? o
      : {
          ...o,
          perCpu: o.perCpu.map((c) =>
            c.workBurstsPerSecond == null || c.busyShare == null
              ? c
              : { ...c, workInUnits: c.workBurstsPerSecond >= UNITS_PER_BUSY_MS * c.busyShare * 1000 },
          ),
        };
  const runs: Run[] = recorded.runs.map((r) => {
    const b = recorded.benchmarks[r.benchmarkId];
    if (!b) return r;
    const o = withUnits(r.read.observation as unknown as WorkloadObservation);
    // The performance plan's benchmark the live estimate took, where it names one (the newest at the
    // read, which may have run after the plan's own); else the newest before the plan's.
    const named = r.read.estimate?.recoverableFrom;
    const floor = (named ? recorded.benchmarks[named] : undefined) ?? performanceFor(b);
    const out = estimateWorkloadCost(o, costsFromBenchmark(b), floor ? costsFromBenchmark(floor) : undefined);
    if (values.verbose)
      console.log(
        `${r.round} ${r.plan} / ${r.workload}: work ${r.workMs?.toFixed(2)} ms; ${out.estimate ? `${out.estimate.addedPercent}% (${out.estimate.low}-${out.estimate.high}) wake ${out.estimate.wakeUpPercent} ramp ${out.estimate.rampPercent} platform ${out.estimate.platformPercent}` : out.reason}`,
      );
    return { ...r, read: { ...r.read, estimate: out.estimate, reason: out.reason } };
  });
  return runs;
};

if (values.resample) {
  const rounds = Math.max(1, Number(values.rounds));
  const pooled = (await Promise.all(positionals.map(replay))).flat();
  const chances = resample(pooled, rounds);
  console.log(
    chances
      .map((c) => `${c.chance.toFixed(2)}  ${c.workload} / ${c.plan} (${c.rounds} rounds recorded)`)
      .join('\n'),
  );
  const all = chances.reduce((p, c) => p * c.chance, 1);
  console.log(
    `\nChance that a run of ${rounds} rounds has every emulated condition within the goal: ${(all * 100).toFixed(2)}% (from ${positionals.length} file(s))`,
  );
  process.exit(0);
}
const runs = await replay(positionals[0]!);
const cs = conditions(runs);
console.log(table(cs));
const missed = cs.filter((c) => !c.within);
const wrong = misranked(cs);
const noneOff = cs.filter((c) => c.plan === NONE && !(c.estimate && withinGoal(c.estimate.added, 0)));
console.log(
  `\nGoal: ${cs.length - missed.length} of ${cs.length} conditions within (against the own time: ${cs.filter((c) => c.ownWithin).length}); ${wrong.length} pair(s) misranked; ${noneOff.length} estimate(s) without emulation outside 0 +-3`,
);
if (missed.length || wrong.length || noneOff.length) process.exitCode = 1;
