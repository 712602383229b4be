/** run_cpu_benchmark: the short CPU benchmark (burst-after-idle penalty, sustained throughput), stored in the history. */
import { formatResult } from '../bench/format.ts';
import { BenchmarkResult } from '../domain/benchmark.ts';
import { benchFingerprint } from '../services/compare-facts.ts';
import { defineOperation } from './define.ts';
import { benchmarkInput } from './inputs.ts';

export const runCpuBenchmark = defineOperation({
  name: 'run_cpu_benchmark',
  title: 'Run the CPU benchmark',
  description:
    'Measures what the power plan does to this CPU in a few seconds: how much slower a short burst of work runs ' +
    'after the CPU was idle for 50 ms to 1 s than on a warm core (the burst penalty users feel on a database ' +
    'server), how long the clock takes to ramp up, and sustained single-thread and all-core throughput. Figures ' +
    'come with p10/median/p90 and a `noisy` flag where the spread is too wide. Refuses with `busy` when the CPU ' +
    'is already over 30% busy (force: true overrides) or another benchmark is running; at most one per host. ' +
    'It loads every CPU for about a second, so avoid peak hours on production. Results are kept (last 100): ' +
    'see list_benchmarks and get_benchmark.',
  input: benchmarkInput,
  output: BenchmarkResult,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  scope: 'benchmark',
  http: { method: 'POST', path: '/v1/benchmarks', status: 201 },
  cli: { command: ['bench'], format: formatResult },
  handler: async (input, ctx) =>
    ctx.bench.run(input, {
      signal: ctx.signal,
      progress: ctx.progress,
      fingerprint: benchFingerprint(ctx.backend),
    }),
});
