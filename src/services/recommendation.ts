/**
 * get_recommendation's work: gather the facts, find the stored benchmark the advice rests on and
 * say which in `basis`, then apply the pure advice rules. It never runs a benchmark (a read starts
 * no work; run_cpu_benchmark does).
 */
import { recommend } from '../advice/recommend.ts';
import type { BenchmarkService } from '../bench/service.ts';
import type { Recommendation, Workload } from '../domain/advice.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { gatherFacts } from './compare-facts.ts';
import type { WorkloadService } from './workload.ts';

export interface AdviceContext {
  backend: PowerBackend;
  bench: Pick<BenchmarkService, 'list' | 'get'>;
  /** The live workload cost, read against the previous read for advice (no wait); absent: not read. */
  workload?: Pick<WorkloadService, 'available' | 'cost'>;
}

export interface AdviceInput {
  workload: Workload;
  benchmark: 'latest' | 'none';
}

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
  ctx: Pick<AdviceContext, 'bench'>,
  planId: string | undefined,
): Promise<{ result?: BenchmarkResult; note: string }> => {
  const { benchmarks } = await ctx.bench.list(SEARCH);
  if (!benchmarks.length)
    return { note: 'Rules only: no benchmark is stored (run one with run_cpu_benchmark).' };
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

export const advise = async (ctx: AdviceContext, input: AdviceInput): Promise<Recommendation> => {
  const facts = await gatherFacts(ctx.backend);
  const found: { result?: BenchmarkResult; note: string } =
    input.benchmark === 'latest'
      ? await latestUnder(ctx, facts.active.plan?.id)
      : { note: 'Rules only, as asked (benchmark=none).' };
  const observed = ctx.workload?.available
    ? await ctx.workload.cost({ consumer: 'advice', active: facts.active }).catch(() => undefined)
    : undefined;
  return recommend({
    workload: input.workload,
    ...facts,
    ...(observed ? { observed } : {}),
    ...(found.result ? { benchmark: found.result } : {}),
    basisNote: found.note,
  });
};
