/**
 * Prometheus' HTTP API as the fleet asks it: POST forms (so a long host list never meets a URL
 * limit), its own credentials and CA, redirects not followed, answers capped and cleaned as an
 * agent's are (lib/untrusted-text.ts). Every failure is a PowerPlanError naming Prometheus, so a
 * fleet call fails whole rather than answer half.
 */
import type http from 'node:http';
import { PowerPlanError } from '../../domain/errors.ts';
import { cleanText, parseUntrustedJson } from '../../lib/untrusted-text.ts';
import { exchange } from './client.ts';
import { asAgentFailure } from './failure.ts';
import type { PrometheusTarget } from './file.ts';

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PrometheusAsk {
  target: PrometheusTarget;
  agent: http.Agent;
  timeoutMs: number;
  /**
   * The largest answer read (fleetMaxAnswerMib): 10,000 hosts answer in 2-3 MiB per query, and a
   * read answer costs several times its size in heap once parsed, so a Prometheus gone wrong (or
   * hostile) meets a 502 naming the cap, never the heap limit.
   */
  maxBytes: number;
}

/** One call of Prometheus' HTTP API; its `data`, or a PowerPlanError naming Prometheus. */
export const call = async (
  ask: PrometheusAsk,
  path: string,
  form?: Record<string, string>,
): Promise<unknown> => {
  const { target } = ask;
  const fail = (detail: string, code: 'upstream' | 'timeout' = 'upstream') =>
    new PowerPlanError(code, `Prometheus at ${target.url}: ${detail}`);
  const body = form ? new URLSearchParams(form).toString() : undefined;
  let answer: Awaited<ReturnType<typeof exchange>>;
  try {
    answer = await exchange(new URL(target.url + path), ask.agent, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        accept: 'application/json',
        ...(target.authorization ? { authorization: target.authorization } : {}),
        ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(ask.timeoutMs),
      maxBytes: ask.maxBytes,
    });
  } catch (e) {
    const f = asAgentFailure(e);
    // The only signal here is the timeout's.
    if (f.problem.title === 'Cancelled') throw fail(`no answer within ${ask.timeoutMs} ms.`, 'timeout');
    if (f.problem.title === 'Answer too large')
      throw fail(`${f.problem.detail} Raise POWERPLAN_FLEET_MAX_ANSWER_MIB if this Prometheus is right.`);
    throw fail(`${f.problem.title}: ${f.problem.detail}`);
  }
  const { status, text } = answer;
  if (status >= 300 && status < 400)
    throw fail(
      `answered ${status} (to ${answer.location === undefined ? 'nowhere' : JSON.stringify(cleanText(answer.location, 200))}); redirects are not followed: put the final URL in the fleet file.`,
    );
  if (status === 401 || status === 403)
    throw fail(`refused the credentials (HTTP ${status}); check tokenFile or basicAuth in the fleet file.`);
  let json: { status?: unknown; data?: unknown; error?: unknown; errorType?: unknown };
  try {
    json = parseUntrustedJson(text) as typeof json;
  } catch {
    throw fail(`answered HTTP ${status} with something that is not JSON: is the url a Prometheus server?`);
  }
  if (json.status !== 'success')
    throw fail(
      typeof json.error === 'string'
        ? cleanText(`${String(json.errorType ?? 'error')}: ${json.error}`)
        : `answered HTTP ${status} without a result.`,
    );
  // Cleaned as it was parsed: the label values are the agents' words (their /metrics).
  return json.data;
};

const isSample = (s: unknown): s is Sample => {
  const x = s as Sample;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.metric === 'object' &&
    x.metric !== null &&
    Array.isArray(x.value) &&
    typeof x.value[0] === 'number' &&
    typeof x.value[1] === 'string'
  );
};

/** An instant query at `time` (Unix seconds); the samples of its vector. */
export const instantQuery = async (ask: PrometheusAsk, query: string, time: number): Promise<Sample[]> => {
  const data = (await call(ask, '/api/v1/query', { query, time: time.toFixed(3) })) as {
    resultType?: unknown;
    result?: unknown;
  };
  if (data?.resultType !== 'vector' || !Array.isArray(data.result) || !data.result.every(isSample))
    throw new PowerPlanError(
      'upstream',
      `Prometheus at ${ask.target.url}: the answer to ${query} is not an instant vector.`,
    );
  return data.result;
};
