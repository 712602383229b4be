/**
 * The A/B plan comparison: under the plan lock (held, and kept fresh, for the whole run), write the
 * restore journal, then for each plan switch, settle and benchmark, and always put the original
 * plan back (success, error, timeout, cancellation, shutdown; a crash is handled by the journal at
 * the next start or plan change). Every switch and the restore go through the plan-change service.
 * The service waits for a running comparison's restore before it exits (see `settled`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { allCoreSpread, difference, figuresOf } from '../advice/measure.ts';
import { recommend } from '../advice/recommend.ts';
import { benchPlan, capMs } from '../bench/profiles.ts';
import type { BenchmarkService } from '../bench/service.ts';
import type { ComparisonEntry, ComparisonResult, Workload } from '../domain/advice.ts';
import type { BenchmarkProfile, BenchmarkResult } from '../domain/benchmark.ts';
import { errorMessage, isPowerPlanError, PowerPlanError } from '../domain/errors.ts';
import type { Plan } from '../domain/schemas.ts';
import type { Caller } from '../domain/scopes.ts';
import { linkedSignal } from '../lib/signal.ts';
import type { PowerBackend } from '../platform/backend.ts';
import { planForKind } from '../platform/resolve.ts';
import type { ChangeIntent, LockedChanges } from './change-intent.ts';
import { benchFingerprint, gatherFacts } from './compare-facts.ts';
import type { PlanChangeService } from './plan-change.ts';
import { owing } from './restore-journal.ts';

export interface CompareRequest {
  plans?: string[];
  workload: Workload;
  profile: BenchmarkProfile;
  settleMs: number;
  threads?: number;
  idleGapsMs?: number[];
  repetitions?: number;
  force: boolean;
  dryRun: boolean;
}

/** What a comparison needs from an operation's context (which carries every dependency). */
export interface CompareContext {
  planChange: PlanChangeService;
  backend: PowerBackend;
  bench: BenchmarkService;
  signal: AbortSignal;
  caller: Caller;
  progress: (p: { progress: number; total?: number; message?: string }) => void;
}

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
  resolve: (ref: string) => Plan,
) => {
  if (!req.plans?.length) return defaultPlans(plans, active);
  const chosen = [active];
  for (const text of req.plans) {
    const p = resolve(text);
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

/** Runs a comparison; `s` is the plan lock held for the whole run (absent for a dry run). */
const execute = async (
  req: CompareRequest,
  ctx: CompareContext,
  s: LockedChanges | undefined,
): Promise<ComparisonResult> => {
  const startedAt = new Date().toISOString();
  const facts = await gatherFacts(ctx.backend);
  const original = facts.active.plan;
  if (!original) {
    throw new PowerPlanError(
      'unsupported',
      facts.active.cannotSetReason ?? 'This system exposes no power plans.',
    );
  }
  const planned = choosePlans(req, facts.plans, original, (ref) => ctx.planChange.resolve(ref, facts.plans));
  // The comparison's checks are those of its first switch: nothing owed (holds in force, a
  // restore that keeps failing), the plan can be changed, group policy.
  const first: ChangeIntent = {
    who: ctx.caller,
    operation: 'compare_power_plans',
    plan: planned[1]!,
    input: { step: 'switch', planned: planned.map((p) => p.id) },
    dryRun: req.dryRun,
    tolerates: 'none',
  };
  const { warnings } = s ? await s.check(first) : await ctx.planChange.check(first);
  const base = {
    startedAt,
    profile: req.profile,
    settleMs: req.settleMs,
    original: ref(original),
    planned: planned.map(ref),
  };
  if (!s) {
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

  const bp = benchPlan(req.profile, req.threads ?? 1, req.idleGapsMs, req.repetitions);
  const deadlineMs = planned.length * (req.settleMs + capMs(bp) + 30_000);
  const deadline = AbortSignal.timeout(deadlineMs);
  // ctx.signal carries the service's shutdown already (runOperation links it).
  const link = linkedSignal([ctx.signal, deadline]);
  const { signal } = link;
  const total = planned.length * 100;

  const journal = owing('comparison', original, ctx.caller.name, {
    createdAt: startedAt,
    planned: planned.map((p) => p.id),
  });
  await s.owe(journal);
  const measured: { plan: Plan; result: BenchmarkResult }[] = [];
  let current: Plan = original;
  let failure: unknown;
  try {
    for (const [i, plan] of planned.entries()) {
      if (signal.aborted) throw signal.reason;
      if (plan.id !== current.id) {
        ctx.progress({ progress: i * 100, total, message: `switching to ${plan.name}` });
        const step = await s.change({ ...first, plan, checked: true });
        current = step.after;
        ctx.progress({ progress: i * 100, total, message: `${plan.name}: settling ${req.settleMs} ms` });
        await sleep(req.settleMs, undefined, { signal });
      }
      const result = await ctx.bench.run(
        {
          profile: req.profile,
          force: req.force,
          ...(req.threads ? { threads: req.threads } : {}),
          ...(req.idleGapsMs ? { idleGapsMs: req.idleGapsMs } : {}),
          ...(req.repetitions ? { repetitions: req.repetitions } : {}),
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
    link.release();
  }

  ctx.progress({ progress: total, total, message: `restoring ${original.name}` });
  // The restore runs even when the caller has gone: it must not take `signal`.
  const restored = await s.restore(ctx.caller, journal, {
    reason:
      failure === undefined ? 'comparison finished' : `comparison ended early: ${errorMessage(failure)}`,
  });
  if (restored.error !== undefined) {
    throw new PowerPlanError(
      'os_error',
      `Restoring the original plan ${original.name} (${original.id}) failed: ${restored.error} The restore journal is kept; it is retried at the next plan change and the next start.`,
    );
  }

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

/** Comparisons: one at a time under the plan lock; shutdown waits for their restore. */
export class ComparisonService {
  private readonly inFlight = new Set<Promise<unknown>>();

  /** Runs one comparison under the plan lock; a concurrent set or comparison waits briefly, then gets 409. */
  run(req: CompareRequest, ctx: CompareContext): Promise<ComparisonResult> {
    const run = req.dryRun
      ? execute(req, ctx, undefined)
      : ctx.planChange.session(`compare_power_plans (${ctx.caller.name})`, (s) => execute(req, ctx, s));
    const tracked = run.catch(() => undefined);
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return run;
  }

  /** Resolves once every comparison of this service has finished, its original plan restored. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
