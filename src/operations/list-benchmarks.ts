/** list_benchmarks: the stored benchmark results, newest first, as headline figures. */
import { z } from 'zod';
import { formatList } from '../bench/format.ts';
import { BenchmarkList } from '../domain/benchmark.ts';
import { defineOperation, readOnly } from './define.ts';
import { limitInput } from './inputs.ts';

export const listBenchmarks = defineOperation({
  name: 'list_benchmarks',
  title: 'List benchmark results',
  description:
    'Lists the stored CPU benchmark results (the last 100 are kept), newest first: id, time, profile, the plan ' +
    'in force, sustained single-thread and all-core throughput (Mops/s), the burst penalty after the longest idle ' +
    'gap, and whether the run was noisy. Use get_benchmark with an id for every figure. Read-only.',
  input: z
    .object({
      limit: limitInput(100, 20, 'How many results to return, newest first (1 to 100, default 20).'),
    })
    .strict(),
  output: BenchmarkList,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/benchmarks' },
  cli: { command: ['benchmarks'], format: formatList },
  handler: async (input, ctx) => ctx.bench.list(input.limit),
});
