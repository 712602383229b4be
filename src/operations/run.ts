/**
 * Runs one operation for any surface: checks the caller's scope, validates the raw input with the
 * operation's schema, calls the handler and validates its output. Surfaces only adapt transport.
 */
import { describeZodError, PowerPlanError } from '../domain/errors.ts';
import { requireScope } from '../domain/scopes.ts';
import type { Operation, OperationContext } from './define.ts';

export type RunContext = Omit<OperationContext, 'progress'> & { progress?: OperationContext['progress'] };

export const runOperation = async (op: Operation, rawInput: unknown, ctx: RunContext): Promise<unknown> => {
  requireScope(ctx.caller, op.scope, op.name);
  const parsed = op.input.safeParse(rawInput ?? {});
  if (!parsed.success) throw new PowerPlanError('invalid_input', describeZodError(parsed.error));
  const result = await op.handler(parsed.data, { progress: () => {}, ...ctx });
  return op.output.parse(result);
};
