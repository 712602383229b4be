/**
 * The status of one agent, from four read-only calls made at once: the active plan (owner,
 * policy, desired state), the holds, the latest benchmark and the recommendation. None of them
 * changes anything or runs a benchmark on the agent.
 */
import type { z } from 'zod';
import { Recommendation } from '../../domain/advice.ts';
import { BenchmarkList } from '../../domain/benchmark.ts';
import { type FleetHostStatus, unansweredHost } from '../../domain/fleet.ts';
import { HoldList } from '../../domain/holds.ts';
import { ActivePlan } from '../../domain/schemas.ts';
import { WorkloadCost } from '../../domain/workload.ts';
import { AgentFailure, asAgentFailure } from './failure.ts';
import type { FleetTarget } from './file.ts';

type Ask = (path: string) => Promise<unknown>;
type Within = (fn: (ask: Ask) => Promise<FleetHostStatus>) => Promise<FleetHostStatus>;

/** An agent's answer, checked against the shape this version expects (a hostile or odd host is that host's error). */
export const expect =
  <S extends z.ZodType>(schema: S, what: string) =>
  (answer: unknown): z.infer<S> => {
    const r = schema.safeParse(answer);
    if (!r.success)
      throw new AgentFailure('error', {
        title: 'Unexpected answer',
        detail: `The agent's ${what} does not have the expected shape (${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}); is it a powerplan agent of a compatible version?`,
      });
    return r.data;
  };

export const hostStatus = async (t: FleetTarget, within: Within): Promise<FleetHostStatus> => {
  const checkedAt = new Date().toISOString();
  const started = performance.now();
  const base = { name: t.name, url: t.url, tags: t.tags, checkedAt };
  try {
    return await within(async (ask) => {
      const [active, holds, benchmarks, advice, workload] = await Promise.all([
        ask('/v1/plans/active').then(expect(ActivePlan, 'active plan')),
        ask('/v1/holds').then(expect(HoldList, 'holds')),
        ask('/v1/benchmarks?limit=1').then(expect(BenchmarkList, 'benchmarks')),
        ask('/v1/recommendation?workload=database&benchmark=latest').then(
          expect(Recommendation, 'recommendation'),
        ),
        // Agents of earlier versions (or without idle counters) have no workload cost: not a failure.
        ask('/v1/workload').then(
          (a) => WorkloadCost.safeParse(a).data ?? null,
          () => null,
        ),
      ]);
      return {
        ...base,
        status: 'ok',
        durationMs: Math.round(performance.now() - started),
        plan: active.plan ? { id: active.plan.id, name: active.plan.name, kind: active.plan.kind } : null,
        owner: active.owner,
        canSet: active.canSet,
        policyManaged: active.policyManaged,
        holds: holds.holds.length,
        drift: active.desired?.status ?? null,
        burstPenaltyPercent: benchmarks.benchmarks[0]?.burstPenaltyPercent ?? null,
        recommendation: {
          summary: advice.summary,
          changeRecommended: advice.changeRecommended,
          kind: advice.recommended?.kind ?? null,
        },
        edited: active.plan?.edited ?? null,
        mismatches: active.effective?.checked ? active.effective.mismatches.length : null,
        controlledBy: active.control?.decidedBy ?? null,
        workloadAddedPercent: workload?.estimate?.addedPercent ?? null,
        reportedByAgent: [...(active.plan ? ['/plan/id', '/plan/name'] : []), '/recommendation/summary'],
      };
    });
  } catch (e) {
    const f = asAgentFailure(e);
    const durationMs = Math.round(performance.now() - started);
    return unansweredHost({ ...base, durationMs }, f.status, f.problem, f.reportedByAgent);
  }
};
