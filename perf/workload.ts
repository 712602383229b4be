/**
 * The product's workload estimate checked against a real database (a script, not a test; needs
 * root and Debian's PostgreSQL 15): pgbench at Poisson arrival rates from 5 ms to 200 ms mean gaps
 * with a mid-sized (~2.5 ms of CPU) and a CPU-heavy (~10 ms) query, and a paced pg_restore, each
 * under emulated plans (none, a slow ramp, a slower ramp: a cgroup whose CPU quota falls after idle
 * and returns after busy time, the product told High performance, Balanced and Power saver), every
 * workload under every plan in turn, over rounds. For every condition it prints what the plan added
 * to the server's work (the time the quota held it back over the CPU it used, in the same run), the
 * measured change against no emulation of the server's work time per query (its CPU and the time
 * the quota held it back), of the queries' own time, latency and throughput, beside the product's
 * own estimate (GET /v1/workload?cpus=<the workload's CPU> bracketing the run, its benchmark run
 * under the same emulation), and the goal: within +-30% or +-3 points of what the plan added,
 * conditions ranked alike, 0 +-3 points with no emulation. On two or more CPUs the database and the
 * product run on CPU 0, and the emulation's polling controller, the database's clients (pgbench,
 * pg_restore) and this script on the last CPU (under every plan, none too), so that their wake-ups
 * stay off the CPU whose pattern is the workload's. What a check killed outright left (its cluster,
 * product, cgroups and directories) the next one ends and removes first, saying so.
 *
 *   npm run perf:workload -- [--rounds 3] [--seconds 15] [--min-queries 150] [--short] [--only <text>] [--retries 2] [--json out.json] [--backend simulated|linux] [--port 19050] [--bare-quota]
 *
 * --seconds: how long each run lasts; --min-queries: the fewest queries a pgbench run holds (at 5
 * a second, 150 take 30 s), so that a low rate's change per query is a mean over enough of them.
 * --only: the workloads whose name contains the text (e.g. `--only restore`, `--only "200 ms"`),
 * to look at a few conditions again without the whole run's 20-odd minutes.
 * --bare-quota: no busy filler while the emulation throttles (the CPU idles between the quota's
 * slices instead of staying busy as under a slow clock; docs/BENCHMARK.md).
 *
 * Exit code 1 when the goal is missed, 2 when the machine was too busy for most runs (refused).
 */
import { availableParallelism, setPriority } from 'node:os';
import { join } from 'node:path';
import { perfArgs } from './lib/args.ts';
import { describePlan, PLANS } from './lib/emulation.ts';
import { footer, header, median } from './lib/machine.ts';
import { runSeconds, runWorkloadCheck, type Workload } from './lib/workload-run.ts';
import { conditions, misranked, NONE, table, withinGoal } from './lib/workload-table.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '15' },
    'min-queries': { type: 'string', default: '150' },
    short: { type: 'boolean', default: false },
    backend: { type: 'string', default: 'simulated' },
    port: { type: 'string', default: '19050' },
    json: { type: 'string' },
    retries: { type: 'string', default: '2' },
    'bare-quota': { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
setPriority(-20);
const short = values.short;
const MID = 2.5;
const HEAVY = 10;
const all: Workload[] = short
  ? [{ name: `${MID} ms query, 25 ms mean gap`, kind: 'pgbench', cpuMs: MID, rate: 40 }]
  : [
      { name: `${MID} ms query, 5 ms mean gap`, kind: 'pgbench', cpuMs: MID, rate: 200 },
      { name: `${MID} ms query, 25 ms mean gap`, kind: 'pgbench', cpuMs: MID, rate: 40 },
      { name: `${MID} ms query, 200 ms mean gap`, kind: 'pgbench', cpuMs: MID, rate: 5 },
      { name: `${HEAVY} ms query, 25 ms mean gap`, kind: 'pgbench', cpuMs: HEAVY, rate: 40 },
      { name: `${HEAVY} ms query, 200 ms mean gap`, kind: 'pgbench', cpuMs: HEAVY, rate: 5 },
      { name: 'pg_restore, 256 KiB chunks, 50 ms storage waits', kind: 'restore' },
    ];
const workloads = all.filter((w) => values.only === undefined || w.name.includes(values.only));
if (!workloads.length) {
  process.stderr.write(
    `workload.ts: --only ${values.only}: no workload's name contains it (${all.map((w) => w.name).join('; ')})\n`,
  );
  process.exit(2);
}
const plans = short ? PLANS.filter((p) => p.name === NONE || p.name === 'slower ramp') : PLANS;
const port = Number(values.port);
const seconds = Math.max(2, Number(values.seconds));
const minQueries = Math.max(0, Number(values['min-queries']));

header('Workload estimate against PostgreSQL 15 under emulated plans');
for (const p of plans)
  console.log(
    `- plan "${p.name}" (the product told ${p.asPlan}): ${describePlan(p)}${p.ramp ? (values['bare-quota'] ? ', the CPU idle while throttled' : ', the CPU kept busy while throttled') : ''}`,
  );
for (const w of workloads)
  if (w.rate)
    console.log(
      `- ${w.name}: runs of ${runSeconds({ seconds, minQueries }, w.rate)} s, ${w.rate} queries a second`,
    );
const { runs, calibration, throttlingProof, benchmarks, disturbedBenchmarks } = await runWorkloadCheck({
  temp: '/tmp/pgcheck',
  pgPort: port,
  productPort: port + 1,
  backend: values.backend,
  rounds: Math.max(1, Number(values.rounds)),
  seconds,
  minQueries,
  plans,
  workloads,
  // About 150 chunks a run: with 74 (300,000 rows) a round's held share and estimate were each a
  // mean over a second of work (docs/BENCHMARK.md).
  restore: { rows: short ? 50_000 : 600_000, chunkBytes: 256 * 1024, waitMs: 50 },
  // Gaps about sqrt(2) apart where the workloads' idle gaps mostly fall (a few ms to ~100 ms), so the
  // loss read between two of them is not a straight line across a clock's fall; the ladder run nine
  // times, so that each gap's mean loss is one of 9 bursts, not a median of 3.
  benchmark: {
    profile: 'standard',
    force: true,
    idleGapsMs: [5, 7, 10, 14, 20, 28, 40, 57, 100, 200, 1000],
    repetitions: 9,
  },
  maxOthersShare: 0.15,
  retries: Math.max(0, Number(values.retries)),
  filler: !values['bare-quota'],
  ...(availableParallelism() >= 2 ? { cpus: { workload: 0, controller: availableParallelism() - 1 } } : {}),
  log: (l) => process.stderr.write(`${l}\n`),
});
for (const [ms, rows] of Object.entries(calibration.rows))
  console.log(
    `Query of ~${ms} ms: ${rows} rows, measured ${calibration.cpuMsPerQuery[ms]?.toFixed(2)} ms of server CPU`,
  );
console.log(`\n${throttlingProof.join('\n')}\n`);
const cs = conditions(runs);
console.log(table(cs));
if (values.json) {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(
    join(values.json),
    JSON.stringify({ runs, calibration, throttlingProof, benchmarks, disturbedBenchmarks }, null, 1),
  );
}

const missed = cs.filter((c) => !c.within);
const wrong = misranked(cs);
const noneOff = cs.filter((c) => c.plan === NONE && !(c.estimate && withinGoal(c.estimate.added, 0)));
const disturbed = runs.filter((r) => r.disturbed).length;
console.log(
  `\nGoal: estimate within +-30% or +-3 points of what the plan added to the server's work (the time the quota held it back over its CPU, in the same run): ${cs.length - missed.length} of ${cs.length} conditions` +
    `${missed.length ? ` (missed: ${missed.map((c) => `${c.workload} / ${c.plan}`).join('; ')})` : ''}`,
);
console.log(
  `The same against the change of the queries' own time (pgbench's latency less its schedule lag): ${cs.filter((c) => c.ownWithin).length} of ${cs.length}`,
);
console.log(
  `Ranking: ${wrong.length ? `${wrong.length} pair(s) of plans ordered against the measurement: ${wrong.map(([a, b]) => `${a.workload}: ${a.plan} > ${b.plan}`).join('; ')}` : 'every pair of plans measured more than 3 points apart is ordered alike'}`,
);
console.log(
  `No emulation: ${noneOff.length ? `${noneOff.length} estimate(s) outside 0 +-3 points` : 'every estimate within 0 +-3 points'}`,
);
/**
 * The host's speed at the calibration against the runs': a run without emulation uses about the
 * calibrated CPU per query or more (the server's background adds to it: 0.85-1.20 times it in the
 * run of 2026-12-04 16:33), so much less says the host ran the VM slower while calibrating, which no
 * guard inside the VM sees, and the queries are smaller than their names (0.51-0.64 times it for
 * four of the five queries in the run of 17:03: 1.2 ms of CPU for the "2.5 ms" query).
 */
const CALIBRATION_HELD = 0.8;
const smaller = workloads.flatMap((w) => {
  const calibrated = w.cpuMs ? calibration.cpuMsPerQuery[String(w.cpuMs)] : undefined;
  const none = runs.flatMap((r) =>
    r.workload === w.name && r.plan === NONE && r.workCpuMs ? [r.workCpuMs] : [],
  );
  const held = calibrated && none.length ? median(none) / calibrated : 1;
  return held < CALIBRATION_HELD
    ? [`${w.name}: ${median(none).toFixed(2)} ms against ${calibrated?.toFixed(2)} ms`]
    : [];
});
console.log(
  `Queries as calibrated: ${smaller.length ? `NO, the runs without emulation used less CPU per query than the calibration (${smaller.join('; ')}): the host ran the VM at another speed while calibrating, and the queries are smaller than their names` : 'every run without emulation used at least 80% of the calibrated CPU per query'}`,
);
console.log(`Runs disturbed by the rest of the machine (> 15% of the CPUs): ${disturbed} of ${runs.length}`);
console.log(
  `Benchmarks disturbed in every attempt: ${disturbedBenchmarks.length} of ${plans.length * Math.max(1, Number(values.rounds))}`,
);
footer();
if (disturbed > runs.length / 2) {
  console.log('REFUSED: the machine was too busy for most runs; run again when it is quieter.');
  process.exitCode = 2;
} else if (missed.length || wrong.length || noneOff.length) process.exitCode = 1;
