/**
 * Authentication for every HTTP route outside the public ones (REST, MCP over HTTP, metrics, the
 * page's data calls). With a token file, each request needs `Authorization: Bearer <token>` and
 * leaves the token's name and scopes in the `caller` variable; per-operation scopes are then
 * checked by runOperation. Without a token file only loopback peers are served: without a token
 * they may only read (any local user's program can be one), with the local administrator
 * credential (admin.token, lib/admin-token.ts) they have control. That credential is accepted
 * from loopback peers in both modes. A connection on the control socket (control-channel.ts) is
 * the local administrator in both modes, whatever it sends: the OS let it connect. A request
 * without a socket (in-process: tests, embedding) is the in-process local caller. A request that
 * sent no token is told so, never that its token is not valid. Refusals are thrown and answered (and logged, sparingly) by the
 * app's onError.
 */
import type { MiddlewareHandler } from 'hono';
import { adminCaller, localCaller, tokenlessCaller } from '../../domain/scopes.ts';
import type { AdminCredential } from '../../lib/admin-token.ts';
import { isLoopbackAddress } from '../../lib/loopback.ts';
import type { TokenVerifier } from '../../lib/tokens.ts';
import { isControlConnection } from './control-channel.ts';
import { type AppEnv, nodeOf, remoteAddressOf } from './env.ts';
import type { PublicMatcher } from './public-routes.ts';
import { Refusal } from './refusals.ts';

/** RFC 6750 challenges: no credentials sent, or credentials that are not accepted. */
const CHALLENGE = 'Bearer realm="powerplan"';
const INVALID_TOKEN = 'Bearer realm="powerplan", error="invalid_token"';

/** RFC 6750 b64token after `Bearer`; anything else is treated as no credentials. */
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;
/** A header that carries no token at all (`Bearer` and nothing, as `$(cat unreadable-file)` leaves it). */
const NO_TOKEN = /^\s*(Bearer)?\s*$/i;

/** The token sent: undefined when none was, '' for a header that is no Bearer token. */
const bearerToken = (header: string | undefined): string | undefined =>
  header === undefined || NO_TOKEN.test(header) ? undefined : (BEARER.exec(header)?.[1] ?? '');

export interface AuthOptions {
  /** The token file's verifier; absent means no token file: loopback callers only. */
  verifier?: TokenVerifier;
  /** The local administrator credential; absent in an app built in-process without start-up. */
  admin?: AdminCredential;
  isPublic: PublicMatcher;
}

/** What the control socket's callers are audited with as their remote. */
export const CONTROL_REMOTE = 'control-socket';

const invalidToken = (reason: 'token_unknown' | 'token_malformed') =>
  new Refusal(
    'unauthorized',
    reason,
    'The token is not valid (unknown, revoked or mistyped); ask for a new one.',
    INVALID_TOKEN,
  );

export const authMiddleware = ({ verifier, admin, isPublic }: AuthOptions): MiddlewareHandler<AppEnv> => {
  return async (c, next) => {
    if (isControlConnection(nodeOf(c).incoming?.socket)) {
      c.set('caller', { ...adminCaller, remote: CONTROL_REMOTE });
      return next();
    }
    const remote = remoteAddressOf(c);
    const open = isPublic(c.req.method, c.req.path);
    // In-process requests (tests, embedding) have no socket and count as local.
    if (!verifier && !open && remote !== undefined && !isLoopbackAddress(remote)) {
      throw new Refusal(
        'forbidden',
        'remote_without_token_file',
        'This service has no token file, so it serves local callers only. To serve other hosts, create a ' +
          "token ('powerplan token create --name <name> --scopes read') and start the service with " +
          'POWERPLAN_TOKEN_FILE set.',
      );
    }
    if (open) {
      c.set('caller', remote === undefined ? localCaller : { ...tokenlessCaller, remote });
      return next();
    }
    const presented = bearerToken(c.req.header('authorization'));
    if (presented && admin?.matches(presented) && (remote === undefined || isLoopbackAddress(remote))) {
      c.set('caller', remote === undefined ? adminCaller : { ...adminCaller, remote });
      return next();
    }
    if (!verifier) {
      if (presented !== undefined) throw invalidToken('token_unknown');
      c.set('caller', remote === undefined ? localCaller : { ...tokenlessCaller, remote });
      return next();
    }

    const verdict = await verifier.verify(presented, remote);
    if (!verdict.ok) {
      if (verifier.problem) {
        throw new Refusal(
          'unauthorized',
          'token_file_invalid',
          'The token file on the server is invalid, so no token is accepted; the service log says why.',
          INVALID_TOKEN,
        );
      }
      if (verdict.reason === 'missing') {
        throw new Refusal(
          'unauthorized',
          'token_missing',
          'No token was sent, and this service needs one: send Authorization: Bearer <token>. An administrator creates one on the ' +
            "server with 'powerplan token create --name <name> --scopes read'.",
          CHALLENGE,
        );
      }
      throw invalidToken(verdict.reason === 'unknown' ? 'token_unknown' : 'token_malformed');
    }
    c.set('caller', verdict.caller);
    return next();
  };
};
