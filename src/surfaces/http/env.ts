/**
 * What every HTTP module shares without importing the app: the context variables our middleware
 * leaves for later handlers, the Node objects behind a request, and the public-route type.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Hono } from 'hono';
import type { Caller } from '../../domain/scopes.ts';
import { jsonText } from '../../lib/frozen.ts';

export type AppEnv = {
  Variables: {
    caller: Caller;
    /** The headers of a JSON answer, security headers included (headers.ts); absent in a bare app. */
    jsonHeaders: Readonly<Record<string, string>>;
    /** The JSON answer made with them, which needs no further header (headers.ts). */
    headedAnswer: Response;
  };
};

/**
 * A route anyone may GET/HEAD without a token and from any Host: an exact path, or everything below
 * a prefix. Only static, data-free routes qualify (liveness, the API contract, page and docs files).
 */
export type PublicRoute = { path: string } | { prefix: string };

/** A Hono sub-app and the public routes it serves, as the page and the docs hand them to the app. */
export interface SubApp {
  // biome-ignore lint/suspicious/noExplicitAny: a sub-app mounts on the app whatever its Env
  app: Hono<any>;
  publicRoutes: PublicRoute[];
}

const JSON_TYPE = { 'Content-Type': 'application/json' } as const;

/**
 * `c.json(value, status)`, with the JSON text of a deeply frozen value (a cached answer) made once
 * (lib/frozen.ts) instead of once per request, and the security headers in the same plain object
 * as its Content-Type. Made as a Response of its own rather than by `c.body`, which turns a header
 * object of more than one key into a WHATWG `Headers`: the Node adapter hands a plain object to
 * `writeHead` as it is. What the chain set on `c.res` before the route (CORS) is still merged in
 * by Hono when the route's answer becomes `c.res`; nothing here uses `c.header()`, whose prepared
 * headers only `c.body` would carry.
 */
export const jsonResponse = (c: Context<AppEnv>, value: unknown, status: 200 | 201 | 202 = 200): Response => {
  const headers = c.get('jsonHeaders');
  if (!headers) return c.body(jsonText(value), status, JSON_TYPE);
  const answer = new Response(jsonText(value), { status, headers });
  c.set('headedAnswer', answer);
  return answer;
};

/** The Node request and response when served by @hono/node-server; absent for in-process requests. */
export const nodeOf = (c: Context): { incoming?: IncomingMessage; outgoing?: ServerResponse } =>
  (c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined) ?? {};

/** The peer address of the TCP connection (not a forwarded header, which anyone can write). */
export const remoteAddressOf = (c: Context): string | undefined => nodeOf(c).incoming?.socket?.remoteAddress;
