/** Calls an operation the way every surface does (scope check, validation), by its registry name. */
import type { Deps } from '../../src/deps.ts';
import { type Caller, localCaller } from '../../src/domain/scopes.ts';
import type { OperationContext } from '../../src/operations/define.ts';
import { operationByName } from '../../src/operations/index.ts';
import { runOperation } from '../../src/operations/run.ts';

/** The context a surface hands an operation: the deps, the local caller and the shutdown signal unless given. */
export const contextOf = (
  deps: Deps,
  options: { caller?: Caller; signal?: AbortSignal; progress?: OperationContext['progress'] } = {},
) => ({
  ...deps,
  caller: options.caller ?? localCaller,
  signal: options.signal ?? deps.shutdown.signal,
  ...(options.progress ? { progress: options.progress } : {}),
});

export const call = async <T = Record<string, unknown>>(
  deps: Deps,
  name: string,
  input: unknown = {},
  caller: Caller = localCaller,
): Promise<T> => {
  const op = operationByName(name);
  if (!op) throw new Error(`no operation ${name}`);
  return (await runOperation(op, input, contextOf(deps, { caller }))) as T;
};
