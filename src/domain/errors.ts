/**
 * The one error type of the service. Every layer throws `PowerPlanError` with a code; the surfaces
 * map the code once (see `surfaces/errors.ts`) to an HTTP status, an MCP `isError` or an exit code.
 */
import { z } from 'zod';

export const errorCodes = {
  invalid_input: { status: 400, title: 'Invalid input' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  conflict: { status: 409, title: 'Conflict' },
  busy: { status: 409, title: 'Busy' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  unsupported: { status: 422, title: 'Not supported on this system' },
  os_error: { status: 502, title: 'Operating system command failed' },
  upstream: { status: 502, title: 'Upstream server failed' },
  timeout: { status: 504, title: 'Timed out' },
  cancelled: { status: 499, title: 'Cancelled' },
  internal: { status: 500, title: 'Internal error' },
} as const;

export type ErrorCode = keyof typeof errorCodes;

export class PowerPlanError extends Error {
  readonly code: ErrorCode;
  /** Extra machine-readable facts for the caller (e.g. the available plans). */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PowerPlanError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return errorCodes[this.code].status;
  }
}

/**
 * A reason the service cannot start that is no single setting's fault (the port in use, a state
 * directory of another user): the CLI prints it as one line and exits 2, like a bad setting.
 */
export const startupError = (message: string, cause?: unknown) =>
  new PowerPlanError('invalid_input', `cannot start: ${message}`, { startup: true }, { cause });

export const isPowerPlanError = (e: unknown): e is PowerPlanError => e instanceof PowerPlanError;

/** One line per zod issue: `field: message`. */
export const describeZodError = (error: z.ZodError, where = 'input'): string =>
  error.issues
    .map((i) => {
      const path = i.path.length ? i.path.join('.') : where;
      if (i.code === 'unrecognized_keys')
        return `${path}: unknown field(s) ${i.keys.map((k) => `'${k}'`).join(', ')}`;
      return `${path}: ${i.message}`;
    })
    .join('; ');

/** The message of anything thrown, for logs, audit records and answers. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** How every surface answers an error (REST problem+json, MCP structured content). */
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
