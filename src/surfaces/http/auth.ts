/**
 * Authentication for every HTTP surface (REST, MCP over HTTP, the page's data calls): with a token
 * file, each request outside the public allowlist needs `Authorization: Bearer <token>` and leaves
 * the token's name and scopes in the `caller` variable; per-operation scopes are then checked by
 * runOperation. Without a token file only loopback callers are served.
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import type { TokenVerifier } from '../../lib/tokens.ts';
import type { AppEnv } from './app.ts';
import { problemResponse } from './app.ts';

/** A route anyone may GET/HEAD without a token: an exact path, or everything below a prefix. */
export type PublicRoute = { path: string } | { prefix: string };

/**
 * Routes that answer without a token. They must not reveal host state or change anything:
 * liveness and the published API contract. Static page or docs assets are added with
 * `addPublicRoute({ prefix: '/docs/' })` by the module that serves them.
 */
const publicRoutes: PublicRoute[] = [{ path: '/healthz' }, { path: '/openapi.json' }];

export const addPublicRoute = (route: PublicRoute): void => {
  if ('prefix' in route && !/^\/[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/$/.test(route.prefix)) {
    throw new Error(`A public prefix must look like /name/ (got ${route.prefix})`);
  }
  publicRoutes.push(route);
};

/** Dot segments, doubled or encoded slashes and backslashes never count as public. */
const suspicious = (path: string) => /(^|\/)\.\.?(\/|$)|\/\/|\\|%2e|%2f|%5c/i.test(path);

export const isPublicRequest = (method: string, path: string): boolean => {
  if (method !== 'GET' && method !== 'HEAD') return false;
  return publicRoutes.some((r) =>
    'path' in r ? r.path === path : path.startsWith(r.prefix) && !suspicious(path),
  );
};

/** The peer address of the TCP connection (not a forwarded header, which anyone can write). */
export const remoteAddressOf = (c: Context): string | undefined =>
  (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
    ?.remoteAddress;

export const isLoopbackAddress = (address: string): boolean => {
  const a = address.toLowerCase();
  return a === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
};

/** RFC 6750 b64token after `Bearer`; anything else is treated as no credentials. */
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

const bearerToken = (header: string | undefined): string | undefined =>
  header === undefined ? undefined : (BEARER.exec(header)?.[1] ?? '');

const unauthorized = (c: Context, message: string, invalid: boolean, log?: Deps['log']): Response => {
  const res = problemResponse(c, new PowerPlanError('unauthorized', message), log);
  res.headers.set(
    'WWW-Authenticate',
    invalid ? 'Bearer realm="powerplan", error="invalid_token"' : 'Bearer realm="powerplan"',
  );
  return res;
};

export interface AuthOptions {
  /** The token file's verifier; absent means no token file: loopback callers only. */
  verifier?: TokenVerifier;
  log: Deps['log'];
}

export const authMiddleware = ({ verifier, log }: AuthOptions): MiddlewareHandler<AppEnv> => {
  return async (c, next) => {
    if (isPublicRequest(c.req.method, c.req.path)) return next();
    const remote = remoteAddressOf(c);

    if (!verifier) {
      // In-process requests (tests, embedding) have no socket and count as local.
      if (remote !== undefined && !isLoopbackAddress(remote)) {
        log.warn('request refused', { reason: 'remote caller without a token file', remote });
        return problemResponse(
          c,
          new PowerPlanError(
            'forbidden',
            'This service has no token file, so it serves local callers only. To serve other hosts, create a ' +
              "token ('powerplan token create --name <name> --scopes read') and start the service with " +
              'POWERPLAN_TOKEN_FILE set.',
          ),
        );
      }
      return next();
    }

    const token = bearerToken(c.req.header('authorization'));
    const verdict = await verifier.verify(token, remote);
    if (!verdict.ok) {
      // Never log the presented value: a mistyped token is often one character from a real one.
      log.warn('request refused', {
        reason: verdict.reason,
        remote,
        method: c.req.method,
        path: c.req.path,
      });
      if (verifier.problem) {
        return unauthorized(
          c,
          'The token file on the server is invalid, so no token is accepted; the service log says why.',
          true,
        );
      }
      if (verdict.reason === 'missing') {
        return unauthorized(
          c,
          'This service needs a token: send Authorization: Bearer <token>. An administrator creates one on the ' +
            "server with 'powerplan token create --name <name> --scopes read'.",
          false,
        );
      }
      return unauthorized(
        c,
        'The token is not valid (unknown, revoked or mistyped); ask for a new one.',
        true,
      );
    }
    c.set('caller', verdict.caller);
    return next();
  };
};
