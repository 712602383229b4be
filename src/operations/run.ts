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
import { freezeDeep, isFrozenDeep } from '../lib/frozen.ts';
import { type LinkedSignal, linkedSignal } from '../lib/signal.ts';
import type { Operation, OperationContext } from './define.ts';

export type RunContext = Omit<OperationContext, 'progress' | 'signal'> & {
  progress?: OperationContext['progress'] | undefined;
  /** The transport's own signal, if it has one; a function is asked on first use only. */
  signal?: AbortSignal | (() => AbortSignal | undefined) | undefined;
};

const noProgress = () => {};

/**
 * One operation's context: the surface's context copied once, and the operation's signal (the
 * transport's linked with the service's shutdown) made on first use: most reads never look at it,
 * and an AbortController costs about a sixth of a read (docs/PERFORMANCE.md). The signal is an
 * accessor of the class, never one made per object (an object literal's `get`, `defineProperty`):
 * an accessor made per request gives each request a hidden class of its own, allocated in the old
 * generation, which keeps everything the request reached alive through the young-generation GCs
 * until a full one (measured: 2.8 MB promoted per scavenge under load, a third of a read's CPU).
 */
class OperationRun {
  #transport: RunContext['signal'];
  #link: LinkedSignal | undefined;
  progress: OperationContext['progress'] = noProgress;

  constructor(ctx: RunContext) {
    // Sets `signal` through the setter below.
    Object.assign(this, ctx);
    this.progress ??= noProgress;
  }

  set signal(transport: RunContext['signal']) {
    this.#transport = transport;
  }

  get signal(): AbortSignal {
    if (!this.#link) {
      const transport = typeof this.#transport === 'function' ? this.#transport() : this.#transport;
      this.#link = linkedSignal([transport, (this as unknown as OperationContext).shutdown.signal]);
    }
    return this.#link.signal;
  }

  static release(run: OperationRun): void {
    run.#link?.release();
  }
}

/**
 * The last checked output of each operation, by what its handler answered: a read that answers what
 * it answered before (the plan in force, polled) gets the output checked then, instead of a second
 * walk of the schema, the largest part of a read's cost. The same deeply frozen answer (a cached
 * read, lib/frozen.ts) is known by its identity; any other answer by its JSON. The output is
 * deeply frozen, since it is shared.
 */
const lastOutput = new WeakMap<Operation, { json: string; output: unknown; frozen?: object }>();

/**
 * The handler's answer checked against (and shaped by) the operation's output schema. A page of a
 * paged answer is never the page before it, so it is only checked: for the 155 pages of a
 * 10,000-host fleet (`fleet status --all`), the JSON for the comparison and the deep freeze took
 * 125 of the 390 ms of checking (Node 22).
 */
export const checkedOutput = (op: Operation, result: unknown): unknown => {
  if (op.paged) return op.output.parse(result);
  const last = lastOutput.get(op);
  const frozen = typeof result === 'object' && result !== null && isFrozenDeep(result) ? result : undefined;
  if (frozen && last?.frozen === frozen) return last.output;
  const json = JSON.stringify(result);
  if (json !== undefined && last?.json === json) {
    if (frozen) last.frozen = frozen;
    return last.output;
  }
  const output = freezeDeep(op.output.parse(result));
  if (json !== undefined) lastOutput.set(op, { json, output, ...(frozen ? { frozen } : {}) });
  return output;
};

/** Input schemas that turn `{}` into `{}` (no field, no default), found once per operation. */
const emptyStaysEmpty = new WeakMap<Operation, boolean>();
const isEmptyObject = (v: unknown): boolean => {
  if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  for (const _ in v) return false;
  return true;
};

/** The raw input validated by the operation's input schema (`{}` for no input, where that is the answer). */
const parseInput = (op: Operation, raw: unknown) => {
  if (isEmptyObject(raw)) {
    let same = emptyStaysEmpty.get(op);
    if (same === undefined) {
      const r = op.input.safeParse({});
      same = r.success && isEmptyObject(r.data);
      emptyStaysEmpty.set(op, same);
    }
    if (same) return { success: true as const, data: {} };
  }
  return op.input.safeParse(raw);
};

/** Unexpected errors logged here already: a surface that shapes them does not log them again. */
const logged = new WeakSet<object>();
export const loggedAlready = (e: unknown): boolean => typeof e === 'object' && e !== null && logged.has(e);

/** True for a dry run: it changes nothing, so its refusal is an answer, not a refused attempt. */
const isDryRun = (input: unknown): boolean =>
  typeof input === 'object' && input !== null && (input as { dryRun?: unknown }).dryRun === true;

/**
 * `rawInput` may be a promise (a request body still to be read): a body that cannot be read is
 * refused here like any other bad input.
 */
export const runOperation = async (
  op: Operation,
  rawInput: unknown,
  surface: RunContext,
): Promise<unknown> => {
  const run = new OperationRun(surface);
  const ctx = run as unknown as OperationContext;
  let raw: unknown;
  try {
    raw = await rawInput;
    requireScope(ctx.caller, op.scope, op.name);
    const parsed = parseInput(op, raw ?? {});
    if (!parsed.success) throw new PowerPlanError('invalid_input', describeZodError(parsed.error));
    const result = await op.handler(parsed.data, ctx);
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
    OperationRun.release(run);
  }
};
