/**
 * perf:workload's figures again from a recorded run (its --json), with the model as it is now:
 * every run's observation and the benchmark it was estimated with are in the file, so a change to
 * the model is checked against the same measurements without running the database again.
 *
 *   npm run perf:workload-replay -- run.json [--verbose]
 *
 * Exit code 1 when the goal is missed (as perf:workload).
 */
import { readFile } from 'node:fs/promises';
import { estimateWorkloadCost } from '../src/advice/workload-cost.ts';
import { costsFromBenchmark } from '../src/advice/workload-costs.ts';
import type { BenchmarkResult } from '../src/domain/benchmark.ts';
import type { WorkloadObservation } from '../src/domain/workload.ts';
import { perfArgs } from './lib/args.ts';
import type { Run } from './lib/workload-run.ts';
import { conditions, misranked, NONE, table, withinGoal } from './lib/workload-table.ts';

const { values, positionals } = perfArgs(import.meta.filename, {
  allowPositionals: true,
  options: {
    verbose: { type: 'boolean', default: false },
    'cpu0-only': { type: 'boolean', default: false },
    'no-floor': { type: 'boolean', default: false },
  },
});
const file = positionals[0];
if (!file) {
  process.stderr.write('workload-replay.ts: name the --json file of a perf:workload run\n');
  process.exit(2);
}
const recorded = JSON.parse(await readFile(file, 'utf8')) as {
  runs: Run[];
  benchmarks: Record<string, BenchmarkResult>;
};
const only0 = (o: WorkloadObservation): WorkloadObservation => {
  const c = o.perCpu.find((x) => x.cpu === 0);
  if (!c || c.busyShare === null || c.idleEntriesPerSecond === null) return o;
  const f = c.idleEntriesPerSecond / (o.idleEntriesPerSecond ?? 1);
  return {
    ...o,
    cpus: 1,
    busyShare: c.busyShare,
    busySeconds: c.busyShare * o.windowSeconds,
    idleEntriesPerSecond: c.idleEntriesPerSecond,
    meanIdlePeriodUs: c.meanIdlePeriodUs,
    workBurstsPerSecond: o.workBurstsPerSecond === null ? null : (c.workBurstsPerSecond ?? null),
    states: o.states.map((st) => ({ ...st, entriesPerSecond: st.entriesPerSecond * f })),
    perCpu: [c],
  };
};
/** The newest benchmark under no emulation at or before this one: the performance plan's. */
const floorOf = (id: string): BenchmarkResult | undefined => {
  const at = recorded.benchmarks[id]?.startedAt ?? '';
  const planOf = (bid: string) => recorded.runs.find((r) => r.benchmarkId === bid)?.plan;
  return Object.values(recorded.benchmarks)
    .filter((b) => planOf(b.id) === NONE && b.startedAt <= at)
    .sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
};
const runs: Run[] = recorded.runs.map((r) => {
  const b = recorded.benchmarks[r.benchmarkId];
  if (!b) return r;
  const raw = r.read.observation as unknown as WorkloadObservation;
  const o = values['cpu0-only'] ? only0(raw) : raw;
  const floor = values['no-floor'] ? undefined : floorOf(r.benchmarkId);
  const out = estimateWorkloadCost(o, costsFromBenchmark(b), floor ? costsFromBenchmark(floor) : undefined);
  if (values.verbose)
    console.log(
      `${r.round} ${r.plan} / ${r.workload}: own ${r.serviceMs.toFixed(2)} ms; ${out.estimate ? `${out.estimate.addedPercent}% (${out.estimate.low}-${out.estimate.high}) wake ${out.estimate.wakeUpPercent} ramp ${out.estimate.rampPercent}` : out.reason}`,
    );
  return { ...r, read: { ...r.read, estimate: out.estimate, reason: out.reason } };
});
const cs = conditions(runs);
console.log(table(cs));
const missed = cs.filter((c) => !c.within);
const wrong = misranked(cs);
const noneOff = cs.filter((c) => c.plan === NONE && !(c.estimate && withinGoal(c.estimate.added, 0)));
console.log(
  `\nGoal: ${cs.length - missed.length} of ${cs.length} conditions within (against the own time: ${cs.filter((c) => c.ownWithin).length}); ${wrong.length} pair(s) misranked; ${noneOff.length} estimate(s) without emulation outside 0 +-3`,
);
if (missed.length || wrong.length || noneOff.length) process.exitCode = 1;
