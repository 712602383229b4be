/**
 * Maps errors to what each surface answers: RFC 9457 problem details over HTTP (and MCP, which
 * shows the same detail), a message and exit code in the CLI. The code-to-status table lives in
 * domain/errors.ts; this file only shapes (the Problem schema is in domain/errors.ts too).
 */
import { z } from 'zod';
import {
  describeZodError,
  errorCodes,
  isPowerPlanError,
  PowerPlanError,
  type Problem,
} from '../domain/errors.ts';

/** Any thrown value as a PowerPlanError; unexpected errors become an opaque `internal`. */
export const normalizeError = (e: unknown): PowerPlanError => {
  if (isPowerPlanError(e)) return e;
  if (e instanceof z.ZodError) return new PowerPlanError('invalid_input', describeZodError(e));
  return new PowerPlanError('internal', 'Internal error; the service log has the details.', undefined, {
    cause: e,
  });
};

export const toProblem = (err: PowerPlanError): Problem => ({
  type: `urn:powerplan:problem:${err.code}`,
  title: errorCodes[err.code].title,
  status: err.status,
  detail: err.message,
  code: err.code,
  ...(err.details ? { details: err.details } : {}),
});
