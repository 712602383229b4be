/**
 * Refused requests: every one is counted (powerplan_http_refused_total{reason}), but only a few
 * lines a minute per reason reach the log, so an unauthenticated client cannot fill the disk with
 * warnings. The next line logged for a reason says how many were left out before it.
 */
import type { Context } from 'hono';
import { Counter, type Registry } from 'prom-client';
import type { Deps } from '../../deps.ts';
import { type ErrorCode, PowerPlanError } from '../../domain/errors.ts';
import { remoteAddressOf } from './env.ts';

/** Why a request was refused before any operation ran; a fixed set (it is a metric label). */
export type RefusalReason =
  | 'host'
  | 'origin'
  | 'cross_site'
  | 'content_type'
  | 'remote_without_token_file'
  | 'token_missing'
  | 'token_malformed'
  | 'token_unknown'
  | 'token_file_invalid'
  | 'body_too_large';

/** A refused request: thrown by the guard, auth or body limit, answered by the app's onError. */
export class Refusal extends PowerPlanError {
  readonly reason: RefusalReason;
  /** The WWW-Authenticate challenge an authentication refusal answers with. */
  readonly challenge: string | undefined;

  constructor(code: ErrorCode, reason: RefusalReason, message: string, challenge?: string) {
    super(code, message);
    this.reason = reason;
    this.challenge = challenge;
  }
}

export const REFUSAL_LOG_LINES_PER_MINUTE = 3;
const WINDOW_MS = 60_000;

export interface Refusals {
  record(reason: RefusalReason, c: Context): void;
}

export const createRefusals = (
  registry: Registry,
  log: Deps['log'],
  now: () => number = Date.now,
): Refusals => {
  const counter = new Counter({
    name: 'powerplan_http_refused_total',
    help: 'HTTP requests refused before any operation ran (Host, Origin, content type, token, body size), by reason.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const windows = new Map<RefusalReason, { start: number; logged: number; suppressed: number }>();
  return {
    record(reason, c) {
      counter.inc({ reason });
      const t = now();
      let w = windows.get(reason);
      if (!w || t - w.start >= WINDOW_MS) {
        w = { start: t, logged: 0, suppressed: w?.suppressed ?? 0 };
        windows.set(reason, w);
      }
      if (w.logged >= REFUSAL_LOG_LINES_PER_MINUTE) {
        w.suppressed++;
        return;
      }
      w.logged++;
      // Never the Authorization value: a mistyped token is often one character from a real one.
      log.warn('request refused', {
        reason,
        method: c.req.method,
        path: c.req.path.slice(0, 200),
        remote: remoteAddressOf(c),
        // What to list in POWERPLAN_ALLOWED_HOSTS / POWERPLAN_CORS_ORIGINS if the caller is legitimate.
        ...(reason === 'host' ? { host: c.req.header('host')?.slice(0, 100) } : {}),
        ...(reason === 'origin' || reason === 'cross_site'
          ? { origin: c.req.header('origin')?.slice(0, 100) }
          : {}),
        ...(w.suppressed ? { notLoggedBefore: w.suppressed } : {}),
      });
      w.suppressed = 0;
    },
  };
};
