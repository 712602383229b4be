/** run_cpu_benchmark: the short CPU benchmark (burst-after-idle penalty, sustained throughput), stored in the history. */
import { z } from 'zod';
import { formatResult } from '../bench/format.ts';
import { MAX_THREADS } from '../bench/service.ts';
import { BenchmarkProfile, BenchmarkResult } from '../domain/benchmark.ts';
import { benchFingerprint } from '../services/compare-facts.ts';
import { defineOperation } from './define.ts';

/** What a benchmark run can be asked for; comparisons take the same fields for each plan. */
export const benchmarkInput = z
  .object({
    profile: BenchmarkProfile.default('quick').describe(
      '`quick` (default, about 5 s) or `standard` (about 20 s, more idle gaps and repetitions).',
    ),
    threads: z
      .number()
      .int()
      .min(1)
      .max(MAX_THREADS)
      .optional()
      .describe(`Threads of the all-core phase, 1 to ${MAX_THREADS}; default: the number of logical CPUs.`),
    force: z
      .boolean()
      .default(false)
      .describe('Run even when the CPU is already busy (the busy guard refuses above 30% average busy).'),
    idleGapsMs: z
      .array(z.number().int().min(0).max(5000))
      .min(1)
      .max(8)
      .optional()
      .describe("Replace the profile's idle gaps (ms, each 0 to 5000, at most 8), e.g. [50, 200, 1000]."),
  })
  .strict();

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
  annotations: { readOnly: false, destructive: false, idempotent: false },
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
