/** Calls an operation the way every surface does (scope check, validation), by its registry name. */
import type { Deps } from '../../src/deps.ts';
import { type Caller, localCaller } from '../../src/domain/scopes.ts';
import { operationByName } from '../../src/operations/index.ts';
import { runOperation } from '../../src/operations/run.ts';

export const call = async <T = Record<string, unknown>>(
  deps: Deps,
  name: string,
  input: unknown = {},
  caller: Caller = localCaller,
): Promise<T> => {
  const op = operationByName(name);
  if (!op) throw new Error(`no operation ${name}`);
  return (await runOperation(op, input, { ...deps, caller, signal: deps.shutdown.signal })) as T;
};
