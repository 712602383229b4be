/**
 * Maps errors to what each surface answers: RFC 9457 problem details over HTTP (and MCP, which
 * shows the same detail), a message and exit code in the CLI. The code-to-status table lives in
 * domain/errors.ts; this file only shapes (the Problem schema is in domain/errors.ts too).
 */
import { errorCodes, type PowerPlanError, type Problem } from '../domain/errors.ts';

export const toProblem = (err: PowerPlanError): Problem => ({
  type: `urn:powerplan:problem:${err.code}`,
  title: errorCodes[err.code].title,
  status: err.status,
  detail: err.message,
  code: err.code,
  ...(err.details ? { details: err.details } : {}),
});
