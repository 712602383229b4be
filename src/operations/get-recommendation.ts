/** get_recommendation: advice on the power plan for a workload, from the settings and, when there is one, a benchmark. */
import { z } from 'zod';
import { formatRecommendation } from '../advice/format.ts';
import { recommend } from '../advice/recommend.ts';
import { Recommendation, Workload } from '../domain/advice.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import { requireScope } from '../domain/scopes.ts';
import { benchFingerprint, gatherFacts } from '../services/compare-facts.ts';
import type { OperationContext } from './define.ts';
import { defineOperation, readOnly } from './define.ts';

/** A stored benchmark older than this no longer speaks for the machine as it is now. */
const RECENT_MS = 24 * 60 * 60 * 1000;
/** How many stored results are searched for one under the active plan. */
const SEARCH = 20;

const ago = (iso: string): string => {
  const min = Math.round((Date.now() - Date.parse(iso)) / 60_000);
  return min < 120 ? `${min} min ago` : `${Math.round(min / 60)} h ago`;
};

/** The newest recent benchmark that ran under the plan in force now, or why there is none. */
const latestUnder = async (
  ctx: OperationContext,
  planId: string | undefined,
): Promise<{ result?: BenchmarkResult; note: string }> => {
  const { benchmarks } = await ctx.bench.list(SEARCH);
  if (!benchmarks.length)
    return { note: 'Rules only: no benchmark is stored (run one with run_cpu_benchmark, or benchmark=run).' };
  for (const b of benchmarks) {
    if (Date.now() - Date.parse(b.startedAt) > RECENT_MS) break;
    const r = await ctx.bench.get(b.id);
    if (planId !== undefined && r.environment.activePlan?.plan?.id === planId) {
      return {
        result: r,
        note: `Benchmark ${r.id} (${ago(r.startedAt)}, under the active plan) plus the rules.`,
      };
    }
  }
  const newest = benchmarks[0]!;
  return {
    note:
      Date.now() - Date.parse(newest.startedAt) > RECENT_MS
        ? `Rules only: the newest benchmark (${newest.id}) is older than 24 h.`
        : `Rules only: no benchmark of the last 24 h ran under the active plan (the newest, ${newest.id}, ran under ${newest.plan ?? 'no plan'}).`,
  };
};

export const getRecommendation = defineOperation({
  name: 'get_recommendation',
  title: 'Recommend a power plan',
  description:
    'Advises which power plan suits a workload on this machine and why: each reason cites the setting or ' +
    'measurement it rests on (e.g. "minimum processor state is 5% on AC"), with a confidence, the measured ' +
    'gain when there is a benchmark, the exact commands to apply it (REST, CLI, powercfg/PowerShell, tuned-adm, ' +
    'powerprofilesctl) and the caveats (power and heat, battery, group policy, VM host, firmware). Says ' +
    '"nothing to change" when that is the truth. By default (benchmark=latest) it uses a benchmark of the last 24 h ' +
    'that ran under the active plan, otherwise the rules alone, and says which in `basis`. benchmark=run measures ' +
    'now (a few seconds of CPU load; needs the benchmark scope). Changes nothing.',
  input: z
    .object({
      workload: Workload.default('database').describe(
        'database (default: OLTP and maintenance), batch, latency or energy-saving.',
      ),
      benchmark: z
        .enum(['latest', 'run', 'none'])
        .default('latest')
        .describe(
          'latest (default): use a recent benchmark under the active plan if there is one; run: run the quick benchmark now (benchmark scope); none: rules only.',
        ),
      force: z
        .boolean()
        .default(false)
        .describe('With benchmark=run: run even when the CPU is already busy.'),
    })
    .strict(),
  output: Recommendation,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/recommendation' },
  cli: { command: ['recommend'], format: formatRecommendation },
  handler: async (input, ctx) => {
    if (input.benchmark === 'run')
      requireScope(ctx.caller, 'benchmark', 'benchmark=run', 'Use benchmark=latest or none.');
    const facts = await gatherFacts(ctx.backend);
    let benchmark: BenchmarkResult | undefined;
    let basisNote: string;
    if (input.benchmark === 'run') {
      benchmark = await ctx.bench.run(
        { profile: 'quick', force: input.force },
        { signal: ctx.signal, progress: ctx.progress, fingerprint: benchFingerprint(ctx.backend) },
      );
      basisNote = `Benchmark ${benchmark.id}, run just now under the active plan, plus the rules.`;
    } else if (input.benchmark === 'latest') {
      const found = await latestUnder(ctx, facts.active.plan?.id);
      benchmark = found.result;
      basisNote = found.note;
    } else {
      basisNote = 'Rules only, as asked (benchmark=none).';
    }
    return recommend({
      workload: input.workload,
      ...facts,
      ...(benchmark ? { benchmark } : {}),
      basisNote,
    });
  },
});
