/**
 * Maps errors to what each surface answers: RFC 9457 problem details over HTTP (and MCP, which
 * shows the same detail), a message and exit code in the CLI. The code-to-status table lives in
 * domain/errors.ts; this file only shapes.
 */
import { z } from 'zod';
import { describeZodError, errorCodes, isPowerPlanError, PowerPlanError } from '../domain/errors.ts';

export const Problem = z
  .object({
    type: z.string().describe('A URI naming the kind of problem: urn:powerplan:problem:<code>.'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().describe('What went wrong and what to do next.'),
    code: z.enum(Object.keys(errorCodes) as [keyof typeof errorCodes, ...(keyof typeof errorCodes)[]]),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Machine-readable facts, e.g. the available plans.'),
  })
  .meta({ id: 'Problem', description: 'An error, as RFC 9457 problem details.' });
export type Problem = z.infer<typeof Problem>;

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
