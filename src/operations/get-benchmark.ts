/** get_benchmark: one stored benchmark result with every figure, its environment and warnings. */
import { z } from 'zod';
import { formatResult } from '../bench/format.ts';
import { BenchmarkId, BenchmarkResult } from '../domain/benchmark.ts';
import { defineOperation, readOnly } from './define.ts';

export const getBenchmark = defineOperation({
  name: 'get_benchmark',
  title: 'Get a benchmark result',
  description:
    'Returns one stored CPU benchmark result by id (from run_cpu_benchmark or list_benchmarks): every phase with ' +
    'p10/median/p90, units and noise flags, the plan and processor settings it ran under, the machine, the load ' +
    'before the run, and warnings. Read-only.',
  input: z.object({ id: BenchmarkId }).strict(),
  output: BenchmarkResult,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/benchmarks/{id}' },
  cli: { command: ['benchmark'], positional: ['id'], format: formatResult },
  handler: async (input, ctx) => ctx.bench.get(input.id),
});
