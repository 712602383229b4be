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
import type { PowerBackend } from '../platform/backend.ts';
import { planForKind, resolvePlan } from '../platform/resolve.ts';
import { benchFingerprint, gatherFacts } from './compare-facts.ts';
import type { PlanChangeService } from './plan-change.ts';
import type { RestoreJournal } from './restore-journal.ts';

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

/** What a comparison needs from an operation's context (which carries every dependency). */
export interface CompareContext {
  planChange: PlanChangeService;
  backend: PowerBackend;
  bench: BenchmarkService;
  shutdown: AbortController;
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

const execute = async (req: CompareRequest, ctx: CompareContext): Promise<ComparisonResult> => {
  const startedAt = new Date().toISOString();
  const pc = ctx.planChange;
  // Under the lock a journal of a dead comparison has been restored already (plan-change settles);
  // what remains is holds in force or a restore that keeps failing: never switch under either.
  const owed = req.dryRun ? undefined : await pc.journal();
  if (owed) {
    throw new PowerPlanError(
      'conflict',
      owed.kind === 'holds' && owed.holds.length
        ? `The plan is held (${owed.holds.map((h) => `${h.id} until ${h.expiresAt}`).join(', ')}); a comparison would switch it. Release the holds first (release_power_plan).`
        : `A restore of ${owed.restorePlanName} (${owed.restorePlanId}) is still owed (${owed.restoreError ?? 'pending'}); it is retried, try again later.`,
    );
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
  const signal = AbortSignal.any([ctx.signal, deadline, ctx.shutdown.signal]);
  const total = planned.length * 100;

  const journal: RestoreJournal = {
    version: 2,
    kind: 'comparison',
    restorePlanId: original.id,
    restorePlanName: original.name,
    createdAt: startedAt,
    createdBy: ctx.caller.name,
    holds: [],
    planned: planned.map((p) => p.id),
  };
  await pc.writeJournal(journal);
  const measured: { plan: Plan; result: BenchmarkResult }[] = [];
  let current: Plan = original;
  let failure: unknown;
  try {
    for (const [i, plan] of planned.entries()) {
      if (signal.aborted) throw signal.reason;
      if (plan.id !== current.id) {
        ctx.progress({ progress: i * 100, total, message: `switching to ${plan.name}` });
        const step = await pc.switchTo(
          ctx.caller,
          'compare_power_plans',
          plan,
          { step: 'switch', planned: planned.map((p) => p.id) },
          { before: current },
        );
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
  }

  ctx.progress({ progress: total, total, message: `restoring ${original.name}` });
  // The restore runs even when the caller has gone: it must not take `signal`.
  const restored = await pc.restore(ctx.caller, journal, {
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
      ? execute(req, ctx)
      : ctx.planChange.run(`compare_power_plans (${ctx.caller.name})`, () => execute(req, ctx));
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
