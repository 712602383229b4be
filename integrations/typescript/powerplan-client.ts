/**
 * A small typed client for a portal, written against types generated from the OpenAPI document:
 *
 *   npx openapi-typescript openapi/openapi.json -o powerplan-api.ts
 *
 * Every request and response below is checked by the compiler against the contract, so a change of
 * the API that would break the portal breaks its build instead (test/integrations/client.test.ts
 * generates the types from the committed document and compiles this file against them).
 */
import type { components, paths } from './powerplan-api.ts';

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;

export type ActivePlan = JsonOf<paths['/v1/plans/active']['get']['responses'][200]>;
export type SetPlanRequest = NonNullable<
  paths['/v1/plans/active']['put']['requestBody']
>['content']['application/json'];
export type SetPlanResult = JsonOf<paths['/v1/plans/active']['put']['responses'][200]>;
export type RecommendationQuery = NonNullable<paths['/v1/recommendation']['get']['parameters']['query']>;
export type Recommendation = JsonOf<paths['/v1/recommendation']['get']['responses'][200]>;
export type BenchmarkList = JsonOf<paths['/v1/benchmarks']['get']['responses'][200]>;
export type Problem = components['schemas']['Problem'];
export type PlanKind = components['schemas']['PlanKind'];

/** An error answer of the API (RFC 9457 problem details). */
export class PowerPlanApiError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
    this.problem = problem;
  }
}

export interface ClientOptions {
  /** e.g. https://db01.example.com:8750 */
  baseUrl: string;
  /** Bearer token; needed when the service has a token file. */
  token?: string;
}

export const createPowerPlanClient = ({ baseUrl, token }: ClientOptions) => {
  const call = async <T>(method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await fetch(new URL(path, baseUrl), {
      method,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json: unknown = await res.json();
    if (!res.ok) throw new PowerPlanApiError(json as Problem);
    return json as T;
  };
  return {
    activePlan: () => call<ActivePlan>('GET', '/v1/plans/active'),
    setPlan: (request: SetPlanRequest) => call<SetPlanResult>('PUT', '/v1/plans/active', request),
    recommendation: (query: RecommendationQuery = {}) => {
      const search = new URLSearchParams();
      if (query.workload) search.set('workload', query.workload);
      if (query.benchmark) search.set('benchmark', query.benchmark);
      return call<Recommendation>('GET', `/v1/recommendation?${search}`);
    },
    benchmarks: () => call<BenchmarkList>('GET', '/v1/benchmarks'),
  };
};

/** One line per server for a portal's overview: plan, settings and advice. */
export const overviewLine = async (client: ReturnType<typeof createPowerPlanClient>): Promise<string> => {
  const active = await client.activePlan();
  const kind: PlanKind | undefined = active.plan?.kind;
  const minAc: number | null | undefined = active.processor.minStatePercent?.ac;
  const advice = await client.recommendation({ workload: 'database', benchmark: 'latest' });
  const target = advice.recommended;
  let next = 'nothing to change';
  if (advice.changeRecommended && target) {
    const trial = await client.setPlan({ plan: target.id, dryRun: true, create: !target.installed });
    next = trial.changed ? `would switch to ${trial.after.name} (${trial.after.id})` : 'already there';
  }
  const latest = (await client.benchmarks()).benchmarks[0];
  const penalty = latest ? `, burst penalty ${latest.burstPenaltyPercent}%` : '';
  return `${active.plan?.name ?? 'no plan'} (${kind ?? '-'}, min ${minAc ?? '?'}% on AC${penalty}): ${advice.summary} - ${next}`;
};
