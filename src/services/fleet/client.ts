/**
 * Asks one agent over its REST API. node:http / node:https with a keep-alive agent per host: the
 * certificate is verified (the system's trust, or the host's own CA file), redirects are never
 * followed (a 3xx is an error, so a token never travels to another address), answers are capped
 * in size (an announced size over the cap is refused before the body is read), and the bearer
 * token goes only to the host it belongs to. Failures are classified into the fleet statuses:
 * unreachable, unauthorized, error. Everything an agent answers is cleaned here, where it is
 * parsed (lib/untrusted-text.ts), before any of it reaches an answer, a table or a log.
 */
import http from 'node:http';
import https from 'node:https';
import { cleanText, parseUntrustedJson } from '../../lib/untrusted-text.ts';
import { version } from '../../version.ts';
import { AgentFailure } from './failure.ts';
import type { FleetTarget } from './file.ts';

/** An agent's answers are a few KiB (a recommendation with its evidence: about 4 KiB). */
const MAX_ANSWER_BYTES = 256 * 1024;

const size = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.round(bytes / 1024)} KiB`;

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
export const agentFor = (target: Pick<FleetTarget, 'url' | 'ca'>, maxSockets: number): http.Agent =>
  target.url.startsWith('https:')
    ? new https.Agent({ keepAlive: true, maxSockets, ...(target.ca ? { ca: target.ca } : {}) })
    : new http.Agent({ keepAlive: true, maxSockets });

/** A failure from the agent's answer: its own problem (its words), else the status alone. */
const fromProblem = (kind: 'unauthorized' | 'error', status: number, body: string): AgentFailure => {
  try {
    const p = JSON.parse(body) as { title?: unknown; detail?: unknown };
    if (typeof p.title === 'string' && typeof p.detail === 'string')
      return new AgentFailure(kind, { title: p.title, detail: p.detail, status }, true);
  } catch {
    // Not problem+json (a proxy's error page, say): the status speaks for itself.
  }
  return new AgentFailure(kind, {
    title: `HTTP ${status}`,
    detail: `The agent answered ${status} ${http.STATUS_CODES[status] ?? ''}`.trim(),
    status,
  });
};

export interface AgentRequest {
  method: 'GET' | 'PUT';
  /** Path below the agent's base URL, with its query (fixed by the caller, never a user string). */
  path: string;
  body?: unknown;
  signal: AbortSignal;
}

/** One HTTP answer, read whole (up to the cap). */
export interface Exchange {
  status: number;
  location: string | undefined;
  text: string;
}

export interface ExchangeRequest {
  method: 'GET' | 'PUT' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  maxBytes: number;
}

/**
 * Sends one request and reads the whole answer; redirects are never followed. Network, TLS and
 * abort errors and an answer over `maxBytes` are AgentFailures; any status is the caller's to judge.
 * A kept-alive connection that the other side closed as idle just as the request went out fails
 * with ECONNRESET or EPIPE before any answer: that request never reached the server, so it is
 * sent once more on a new connection (Node's documented `reusedSocket` pattern).
 */
export const exchange = (url: URL, agent: http.Agent, req: ExchangeRequest): Promise<Exchange> =>
  exchangeOnce(url, agent, req).catch((e: unknown) => {
    if (!(e instanceof StaleConnection)) throw e;
    return exchangeOnce(url, agent, req, false);
  });

/** A reused keep-alive connection found closed before the request got an answer. */
class StaleConnection extends Error {}

const exchangeOnce = (
  url: URL,
  agent: http.Agent,
  req: ExchangeRequest,
  mayRetry = true,
): Promise<Exchange> =>
  new Promise((resolve, reject) => {
    const headers = {
      'user-agent': `powerplan-fleet/${version}`,
      ...req.headers,
      ...(req.body !== undefined ? { 'content-length': String(Buffer.byteLength(req.body)) } : {}),
    };
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: req.method,
      headers,
      agent,
      signal: req.signal,
    });
    let answered = false;
    request.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let received = 0;
      const tooLarge = (announced?: number) => {
        res.destroy();
        reject(
          new AgentFailure('error', {
            title: 'Answer too large',
            detail: `The answer to ${req.method} ${url.pathname} ${announced === undefined ? 'was' : `announced ${size(announced)},`} more than the ${size(req.maxBytes)} an answer may have; it was not read.`,
            status: res.statusCode ?? 0,
          }),
        );
      };
      const announced = Number(res.headers['content-length']);
      if (announced > req.maxBytes) return tooLarge(announced);
      res.on('data', (c: Buffer) => {
        received += c.length;
        if (received > req.maxBytes) tooLarge();
        else chunks.push(c);
      });
      res.on('error', (e) => reject(classify(e, req.signal)));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          location: res.headers.location,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.on('error', (e) => {
      const code = (e as NodeJS.ErrnoException).code;
      if (
        mayRetry &&
        !answered &&
        request.reusedSocket &&
        !req.signal.aborted &&
        (code === 'ECONNRESET' || code === 'EPIPE')
      )
        reject(new StaleConnection(code));
      else reject(classify(e, req.signal));
    });
    request.end(req.body);
  });

/** Sends one request and returns the parsed JSON of a 2xx answer; anything else is an AgentFailure. */
export const askAgent = async (
  target: FleetTarget,
  agent: http.Agent,
  req: AgentRequest,
): Promise<unknown> => {
  const payload = req.body === undefined ? undefined : JSON.stringify(req.body);
  const { status, location, text } = await exchange(new URL(target.url + req.path), agent, {
    method: req.method,
    headers: {
      accept: 'application/json',
      ...(target.token ? { authorization: `Bearer ${target.token}` } : {}),
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(payload !== undefined ? { body: payload } : {}),
    signal: req.signal,
    maxBytes: MAX_ANSWER_BYTES,
  });
  if (status >= 300 && status < 400)
    throw new AgentFailure('error', {
      title: 'Redirect not followed',
      detail: `The agent answered ${status} (to ${location === undefined ? 'nowhere' : JSON.stringify(cleanText(location, 200))}); redirects are not followed, so that the token stays with its host. Put the final URL in the fleet file.`,
      status,
    });
  if (status === 401 || status === 403) throw fromProblem('unauthorized', status, text);
  if (status < 200 || status >= 300) throw fromProblem('error', status, text);
  let json: unknown;
  try {
    json = parseUntrustedJson(text);
  } catch {
    throw new AgentFailure('error', {
      title: 'Not an agent',
      detail: 'The answer is not JSON: is this URL a powerplan service?',
      status,
    });
  }
  return json;
};

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
      detail: `${code || 'TLS'}: ${e.message}. Name the CA with caFile in the fleet file.`,
    });
  return new AgentFailure('error', { title: 'Request failed', detail: `${code || e.name}: ${e.message}` });
};
