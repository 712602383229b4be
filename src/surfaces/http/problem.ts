/**
 * Problem responses: every error an HTTP route or middleware throws ends here, in the app's
 * onError, and leaves as RFC 9457 problem+json (the shape itself is surfaces/errors.ts), with the
 * headers its code calls for.
 */
import type { Context, ErrorHandler } from 'hono';
import type { Deps } from '../../deps.ts';
import { normalizeError, type PowerPlanError } from '../../domain/errors.ts';
import { loggedAlready } from '../../operations/run.ts';
import { toProblem } from '../errors.ts';
import { Refusal, type Refusals } from './refusals.ts';

const headersFor = (err: PowerPlanError): Record<string, string> => {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (err instanceof Refusal && err.challenge) headers['www-authenticate'] = err.challenge;
  // The unread rest of an oversized body would be parsed as the next request: end the connection,
  // and say so, so that a keep-alive client opens a new one instead of failing on a dead socket.
  if (err.code === 'payload_too_large') headers.connection = 'close';
  return headers;
};

/** The problem+json response for an error (any thrown value; unexpected ones become `internal`). */
export const problemResponse = (c: Context, error: unknown): Response => {
  const err = normalizeError(error);
  return c.body(JSON.stringify(toProblem(err)), err.status as 400, headersFor(err));
};

/**
 * The app's onError: logs unexpected errors of the middleware (an operation's were logged by
 * runOperation), records refusals, answers problem+json.
 */
export const errorHandler =
  (log: Deps['log'], refusals: Refusals): ErrorHandler =>
  (error, c) => {
    const err = normalizeError(error);
    if (err.code === 'internal' && !loggedAlready(error)) {
      log.error('unexpected error', {
        path: c.req.path,
        error: String(err.cause ?? error),
        stack: (err.cause as Error | undefined)?.stack,
      });
    }
    if (err instanceof Refusal) refusals.record(err.reason, c);
    return problemResponse(c, err);
  };
