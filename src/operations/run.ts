/**
 * Runs one operation for any surface: checks the caller's scope, validates the raw input with the
 * operation's schema, calls the handler and validates its output. It is the one operation-context
 * path of REST, MCP and the CLI: the transport's signal (client gone, MCP cancellation, Ctrl-C)
 * is linked with the service's shutdown here, once, and an unexpected error is logged here, once.
 * A refused attempt of an operation that changes a plan (one the audit trail names) is audited
 * here, whatever refused it: the input, the scope, or the change itself (the plan change records
 * its own refusals first, with the input it names; the same error is not recorded twice).
 * Surfaces only adapt transport.
 */
import { AuditOperation } from '../domain/audit.ts';
import { describeZodError, normalizeError, PowerPlanError } from '../domain/errors.ts';
import { requireScope } from '../domain/scopes.ts';
import { type LinkedSignal, linkedSignal } from '../lib/signal.ts';
import type { Operation, OperationContext } from './define.ts';

export type RunContext = Omit<OperationContext, 'progress' | 'signal'> & {
  progress?: OperationContext['progress'];
  /** The transport's own signal, if it has one (may be a getter, read on first use). */
  signal?: AbortSignal | undefined;
};

const noProgress = () => {};

/**
 * The last checked output of each operation, by the JSON of what its handler answered: a read that
 * answers what it answered before (the plan in force, polled) gets the output checked then, instead
 * of a second walk of the schema, the largest part of a read's cost. Frozen, since it is shared.
 */
const lastOutput = new WeakMap<Operation, { json: string; output: unknown }>();

const deepFreeze = <T>(v: T): T => {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
};

/** The handler's answer checked against (and shaped by) the operation's output schema. */
export const checkedOutput = (op: Operation, result: unknown): unknown => {
  const json = JSON.stringify(result);
  const last = lastOutput.get(op);
  if (json !== undefined && last?.json === json) return last.output;
  const output = deepFreeze(op.output.parse(result));
  if (json !== undefined) lastOutput.set(op, { json, output });
  return output;
};

/** Unexpected errors logged here already: a surface that shapes them does not log them again. */
const logged = new WeakSet<object>();
export const loggedAlready = (e: unknown): boolean => typeof e === 'object' && e !== null && logged.has(e);

/** True for a dry run: it changes nothing, so its refusal is an answer, not a refused attempt. */
const isDryRun = (input: unknown): boolean =>
  typeof input === 'object' && input !== null && (input as { dryRun?: unknown }).dryRun === true;

/**
 * `ctx` is used as the operation's context as it is (not copied): a surface may give it a `signal`
 * made on first use (a getter), which a copy would call. `rawInput` may be a promise (a request
 * body still to be read): a body that cannot be read is refused here like any other bad input.
 */
export const runOperation = async (op: Operation, rawInput: unknown, ctx: RunContext): Promise<unknown> => {
  // The operation's signal, made on first use (most reads never look at it, and an
  // AbortController costs about a sixth of a read, docs/PERFORMANCE.md).
  const transport = Object.getOwnPropertyDescriptor(ctx, 'signal');
  let link: LinkedSignal | undefined;
  Object.defineProperty(ctx, 'signal', {
    configurable: true,
    enumerable: true,
    get: () => {
      link ??= linkedSignal([
        transport?.get ? transport.get.call(ctx) : transport?.value,
        ctx.shutdown.signal,
      ]);
      return link.signal;
    },
  });
  let raw: unknown;
  try {
    raw = await rawInput;
    requireScope(ctx.caller, op.scope, op.name);
    const parsed = op.input.safeParse(raw ?? {});
    if (!parsed.success) throw new PowerPlanError('invalid_input', describeZodError(parsed.error));
    ctx.progress ??= noProgress;
    const result = await op.handler(parsed.data, ctx as OperationContext);
    return checkedOutput(op, result);
  } catch (e) {
    const err = normalizeError(e);
    if (err.code === 'internal' && typeof e === 'object' && e !== null) {
      ctx.log.error('unexpected error', {
        operation: op.name,
        error: String(err.cause ?? e),
        stack: (err.cause as Error | undefined)?.stack,
      });
      logged.add(e);
    }
    const audited = AuditOperation.safeParse(op.name);
    if (audited.success && !isDryRun(raw)) await ctx.planChange.refused(ctx.caller, audited.data, raw, e);
    throw e;
  } finally {
    link?.release();
  }
};
