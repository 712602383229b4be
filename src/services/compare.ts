/**
 * The A/B plan comparison: under the plan lock, write the restore journal, then for each plan
 * switch, settle and benchmark, and always put the original plan back (success, error, timeout,
 * cancellation, SIGTERM; a crash is handled by the journal at the next start). The service waits
 * for a running comparison's restore before it exits (see `comparisonsSettled`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { allCoreSpread, difference, figuresOf } from '../advice/measure.ts';
import { recommend } from '../advice/recommend.ts';
import { benchPlan, capMs } from '../bench/profiles.ts';
import type { Deps } from '../deps.ts';
import type { ComparisonEntry, ComparisonResult, Workload } from '../domain/advice.ts';
import type { BenchmarkProfile, BenchmarkResult } from '../domain/benchmark.ts';
import { isPowerPlanError, PowerPlanError } from '../domain/errors.ts';
import type { Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { audit } from '../lib/audit.ts';
import { planForKind, resolvePlan } from '../platform/resolve.ts';
import { benchFingerprint, gatherFacts } from './compare-facts.ts';
import {
  type CompareJournal,
  otherProcessAlive,
  readJournal,
  replayJournal,
  writeJournal,
} from './compare-journal.ts';

export interface CompareRequest {
  plans?: string[];
  workload: Workload;
  profile: BenchmarkProfile;
  settleMs: number;
  threads?: number;
  idleGapsMs?: number[];
  force: boolean;
  dryRun: boolean;
}

export type CompareContext = Deps & {
  signal: AbortSignal;
  caller: Caller;
  progress: (p: { progress: number; total?: number; message?: string }) => void;
};

/** Comparisons in flight per service instance (keyed by its shutdown controller). */
const inFlight = new WeakMap<AbortController, Set<Promise<unknown>>>();

/** Resolves once every comparison of this instance has finished, its original plan restored. */
export const comparisonsSettled = async (deps: Pick<Deps, 'shutdown'>): Promise<void> => {
  const running = inFlight.get(deps.shutdown);
  if (running) await Promise.allSettled([...running]);
};

const ref = (p: Plan) => ({ id: p.id, name: p.name, kind: p.kind });

/** The default pair: the active plan and the best performance plan (or Balanced, if that is the active one). */
const defaultPlans = (plans: readonly Plan[], active: Plan): Plan[] => {
  const best = planForKind(plans, 'ultimate-performance') ?? planForKind(plans, 'high-performance');
  const other = best && best.id !== active.id ? best : planForKind(plans, 'balanced');
  if (!other || other.id === active.id) {
    throw new PowerPlanError(
      'invalid_input',
      `Nothing to compare ${active.name} with: no performance or balanced plan is installed. Name the plans to compare, or create one first (set_power_plan with create: true).`,
    );
  }
  return [active, other];
};

const choosePlans = (
  req: CompareRequest,
  plans: readonly Plan[],
  active: Plan,
  aliases: Record<string, string>,
) => {
  if (!req.plans?.length) return defaultPlans(plans, active);
  const chosen = [active];
  for (const text of req.plans) {
    const p = resolvePlan(text, plans, aliases);
    if (!chosen.some((c) => c.id === p.id)) chosen.push(p);
  }
  if (chosen.length < 2) {
    throw new PowerPlanError(
      'invalid_input',
      `Nothing to compare: ${active.name} is the active plan already; name at least one other plan.`,
    );
  }
  return chosen;
};

const entries = (measured: { plan: Plan; result: BenchmarkResult }[]): ComparisonEntry[] => {
  const [first] = measured;
  if (!first) return [];
  const of = figuresOf(first.result);
  return measured.map(({ plan, result }, i) => {
    const f = figuresOf(result);
    const noisy = f.noisy || of.noisy;
    return {
      plan: ref(plan),
      original: i === 0,
      benchmarkId: result.id,
      figures: f,
      difference:
        i === 0
          ? null
          : {
              burstAfterIdle: difference(of.burstAfterIdleMs, f.burstAfterIdleMs, false, noisy),
              singleThread: difference(of.singleThreadMops, f.singleThreadMops, true, noisy),
              allCore: difference(allCoreSpread(first.result), allCoreSpread(result), true, noisy),
            },
    };
  });
};

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

const execute = async (req: CompareRequest, ctx: CompareContext): Promise<ComparisonResult> => {
  const startedAt = new Date().toISOString();
  const leftover = await readJournal(ctx);
  if (leftover) {
    if (otherProcessAlive(leftover.pid)) {
      throw new PowerPlanError(
        'conflict',
        `A comparison is running in another process (pid ${leftover.pid}); try again when it has finished.`,
      );
    }
    await replayJournal(ctx, leftover, 'journal left behind by an interrupted comparison');
  }
  const facts = await gatherFacts(ctx.backend);
  const original = facts.active.plan;
  if (!original) {
    throw new PowerPlanError(
      'unsupported',
      facts.active.cannotSetReason ?? 'This system exposes no power plans.',
    );
  }
  const planned = choosePlans(req, facts.plans, original, ctx.backend.aliases?.() ?? {});
  const warnings: string[] = [];
  if (facts.active.policyManaged) {
    warnings.push(
      'Group policy sets the plan here; a policy refresh during the comparison would disturb it.',
    );
  }
  const base = {
    startedAt,
    profile: req.profile,
    settleMs: req.settleMs,
    original: ref(original),
    planned: planned.map(ref),
  };
  if (req.dryRun) {
    if (!facts.active.canSet)
      warnings.push(`The comparison would be refused: ${facts.active.cannotSetReason ?? 'not allowed here'}`);
    return {
      ...base,
      dryRun: true,
      finishedAt: new Date().toISOString(),
      restored: true,
      results: [],
      recommendation: null,
      warnings,
    };
  }
  if (!facts.active.canSet) {
    throw new PowerPlanError(
      'forbidden',
      facts.active.cannotSetReason ?? 'The power plan cannot be changed here.',
    );
  }

  const bp = benchPlan(req.profile, req.threads ?? 1, req.idleGapsMs);
  const deadlineMs = planned.length * (req.settleMs + capMs(bp) + 30_000);
  const deadline = AbortSignal.timeout(deadlineMs);
  const local = new AbortController();
  const onTerm = () => local.abort(new PowerPlanError('cancelled', 'The comparison was stopped by SIGTERM.'));
  process.once('SIGTERM', onTerm);
  const signal = AbortSignal.any([ctx.signal, deadline, local.signal]);
  const total = planned.length * 100;

  const journal: CompareJournal = {
    version: 1,
    pid: process.pid,
    startedAt,
    caller: ctx.caller.name,
    originalPlanId: original.id,
    originalPlanName: original.name,
    planned: planned.map((p) => p.id),
  };
  await writeJournal(ctx, journal);
  const measured: { plan: Plan; result: BenchmarkResult }[] = [];
  let current = original.id;
  let failure: unknown;
  try {
    for (const [i, plan] of planned.entries()) {
      if (signal.aborted) throw signal.reason;
      if (plan.id !== current) {
        ctx.progress({ progress: i * 100, total, message: `switching to ${plan.name}` });
        try {
          await ctx.backend.setActive(plan.id);
        } catch (e) {
          await audit(ctx.store, ctx.caller, {
            operation: 'compare_power_plans',
            before: { id: current },
            after: ref(plan),
            result: 'failed',
            error: message(e),
          });
          throw e;
        }
        await audit(ctx.store, ctx.caller, {
          operation: 'compare_power_plans',
          input: { step: 'switch', planned: planned.map((p) => p.id) },
          before: { id: current },
          after: ref(plan),
          result: 'changed',
        });
        current = plan.id;
        ctx.progress({ progress: i * 100, total, message: `${plan.name}: settling ${req.settleMs} ms` });
        await sleep(req.settleMs, undefined, { signal });
      }
      const result = await ctx.bench.run(
        {
          profile: req.profile,
          force: req.force,
          ...(req.threads ? { threads: req.threads } : {}),
          ...(req.idleGapsMs ? { idleGapsMs: req.idleGapsMs } : {}),
        },
        {
          signal,
          fingerprint: benchFingerprint(ctx.backend),
          progress: (p) =>
            ctx.progress({
              progress: i * 100 + Math.round((100 * p.progress) / Math.max(p.total, 1)),
              total,
              message: `${plan.name}: ${p.message}`,
            }),
        },
      );
      measured.push({ plan, result });
    }
  } catch (e) {
    failure = e;
  } finally {
    process.off('SIGTERM', onTerm);
  }

  ctx.progress({ progress: total, total, message: `restoring ${original.name}` });
  // The restore runs even when the caller has gone: it must not take `signal`.
  await replayJournal(
    ctx,
    journal,
    failure === undefined ? 'comparison finished' : `comparison ended early: ${message(failure)}`,
    ctx.caller,
  );

  if (failure !== undefined) {
    if (deadline.aborted && !ctx.signal.aborted) {
      throw new PowerPlanError(
        'timeout',
        `The comparison took longer than ${deadlineMs} ms; ${original.name} was restored.`,
      );
    }
    if (signal.aborted && !(isPowerPlanError(failure) && failure.code !== 'cancelled')) {
      throw new PowerPlanError('cancelled', `The comparison was cancelled; ${original.name} was restored.`);
    }
    throw failure;
  }

  const results = entries(measured);
  const recommendation = recommend({
    workload: req.workload,
    system: facts.system,
    plans: facts.plans,
    active: facts.active,
    comparison: results,
  });
  return {
    ...base,
    dryRun: false,
    finishedAt: new Date().toISOString(),
    restored: true,
    results,
    recommendation,
    warnings: [...warnings, ...new Set(measured.flatMap((m) => m.result.warnings))],
  };
};

/** Runs one comparison under the plan lock; a concurrent set or comparison waits briefly, then gets 409. */
export const runComparison = (req: CompareRequest, ctx: CompareContext): Promise<ComparisonResult> => {
  const run = req.dryRun
    ? execute(req, ctx)
    : ctx.planLock.run(`compare_power_plans (${ctx.caller.name})`, () => execute(req, ctx));
  let set = inFlight.get(ctx.shutdown);
  if (!set) {
    set = new Set();
    inFlight.set(ctx.shutdown, set);
  }
  const tracked = run.catch(() => undefined);
  set.add(tracked);
  void tracked.finally(() => set.delete(tracked));
  return run;
};
