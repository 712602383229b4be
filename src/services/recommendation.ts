/**
 * get_recommendation's work: gather the facts, find (or run) the benchmark the advice rests on and
 * say which in `basis`, then apply the pure advice rules.
 */
import { recommend } from '../advice/recommend.ts';
import type { BenchmarkService } from '../bench/service.ts';
import type { Recommendation, Workload } from '../domain/advice.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import { type Caller, requireScope } from '../domain/scopes.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { benchFingerprint, gatherFacts } from './compare-facts.ts';

export interface AdviceContext {
  backend: PowerBackend;
  bench: BenchmarkService;
  caller: Caller;
  signal: AbortSignal;
  progress: (p: { progress: number; total?: number; message?: string }) => void;
}

export interface AdviceInput {
  workload: Workload;
  benchmark: 'latest' | 'run' | 'none';
  force: boolean;
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

export const advise = async (ctx: AdviceContext, input: AdviceInput): Promise<Recommendation> => {
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
};
