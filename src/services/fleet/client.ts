/**
 * Asks one agent over its REST API. node:http / node:https with a keep-alive agent per host: the
 * certificate is verified (the system's trust, or the host's own CA file), redirects are never
 * followed (a 3xx is an error, so a token never travels to another address), answers are capped
 * in size, and the bearer token goes only to the host it belongs to. Failures are classified
 * into the fleet statuses: unreachable, unauthorized, error.
 */
import http from 'node:http';
import https from 'node:https';
import type { FleetError } from '../../domain/fleet.ts';
import { version } from '../../version.ts';
import { AgentFailure } from './failure.ts';
import type { FleetTarget } from './file.ts';

const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

const unreachableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
]);

/** One keep-alive agent per host, so a status of many hosts reuses its connections. */
export const agentFor = (target: FleetTarget, maxSockets: number): http.Agent =>
  target.url.startsWith('https:')
    ? new https.Agent({ keepAlive: true, maxSockets, ...(target.ca ? { ca: target.ca } : {}) })
    : new http.Agent({ keepAlive: true, maxSockets });

const fromProblem = (status: number, body: string): FleetError => {
  try {
    const p = JSON.parse(body) as { title?: unknown; detail?: unknown };
    if (typeof p.title === 'string' && typeof p.detail === 'string')
      return { title: p.title, detail: p.detail, status };
  } catch {
    // Not problem+json (a proxy's error page, say): the status speaks for itself.
  }
  return {
    title: `HTTP ${status}`,
    detail: `The agent answered ${status} ${http.STATUS_CODES[status] ?? ''}`.trim(),
    status,
  };
};

export interface AgentRequest {
  method: 'GET' | 'PUT';
  /** Path below the agent's base URL, with its query (fixed by the caller, never a user string). */
  path: string;
  body?: unknown;
  signal: AbortSignal;
}

/** Sends one request and returns the parsed JSON of a 2xx answer; anything else is an AgentFailure. */
export const askAgent = (target: FleetTarget, agent: http.Agent, req: AgentRequest): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const url = new URL(target.url + req.path);
    const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': `powerplan-fleet/${version}`,
      ...(target.token ? { authorization: `Bearer ${target.token}` } : {}),
      ...(payload !== undefined
        ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }
        : {}),
    };
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: req.method,
      headers,
      agent,
      signal: req.signal,
    });
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) {
          res.destroy();
          reject(
            new AgentFailure('error', {
              title: 'Answer too large',
              detail: `The agent sent more than ${MAX_ANSWER_BYTES} bytes.`,
            }),
          );
        } else chunks.push(c);
      });
      res.on('error', (e) => reject(classify(e, req.signal)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (status >= 300 && status < 400) {
          reject(
            new AgentFailure('error', {
              title: 'Redirect not followed',
              detail: `The agent answered ${status} (to ${res.headers.location ?? 'nowhere'}); redirects are not followed, so that the token stays with its host. Put the final URL in the fleet file.`,
              status,
            }),
          );
        } else if (status === 401 || status === 403) {
          reject(new AgentFailure('unauthorized', fromProblem(status, text)));
        } else if (status < 200 || status >= 300) {
          reject(new AgentFailure('error', fromProblem(status, text)));
        } else {
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(
              new AgentFailure('error', {
                title: 'Not an agent',
                detail: 'The answer is not JSON: is this URL a powerplan service?',
                status,
              }),
            );
          }
        }
      });
    });
    request.on('error', (e) => reject(classify(e, req.signal)));
    request.end(payload);
  });

/** Network, TLS and abort errors as fleet statuses; the timeout reason of the signal wins. */
const classify = (e: Error, signal: AbortSignal): AgentFailure => {
  if (e instanceof AgentFailure) return e;
  if (signal.aborted && signal.reason instanceof AgentFailure) return signal.reason;
  if (signal.aborted)
    return new AgentFailure('error', {
      title: 'Cancelled',
      detail: String((signal.reason as Error)?.message ?? 'cancelled'),
    });
  const code = (e as NodeJS.ErrnoException).code ?? '';
  if (unreachableCodes.has(code))
    return new AgentFailure('unreachable', { title: 'Unreachable', detail: `${code}: ${e.message}` });
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME/i.test(code) || /certificate/i.test(e.message))
    return new AgentFailure('error', {
      title: 'TLS verification failed',
      detail: `${code || 'TLS'}: ${e.message}. Name the agent's CA with caFile in the fleet file.`,
    });
  return new AgentFailure('error', { title: 'Request failed', detail: `${code || e.name}: ${e.message}` });
};
