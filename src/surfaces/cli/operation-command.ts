/**
 * An operation run as a command: its positionals and flags become the input, Ctrl-C or SIGTERM
 * cancels it, progress goes to stderr on a terminal, the answer is printed for a person (its
 * formatter) or as the REST JSON with --json.
 */
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import { localCaller } from '../../domain/scopes.ts';
import type { Operation } from '../../operations/define.ts';
import { runOperation } from '../../operations/run.ts';
import { coerceStrings, inputFields } from '../input.ts';
import type { CliIo } from './command.ts';
import { usageError } from './usage.ts';
import { cliCommandWords, kebab } from './words.ts';

export interface OperationCommand {
  op: Operation;
  values: Record<string, unknown>;
  positionals: string[];
  json: boolean;
  deps: () => Promise<Deps>;
  io: CliIo;
  /** The exit code of a failure, once printed. */
  fail: (e: unknown) => number;
}

/** The input the arguments give, or the exit code of a usage error (printed). */
const inputOf = ({ op, values, positionals, io }: OperationCommand): Record<string, unknown> | number => {
  const positional = op.cli.positional ?? [];
  if (positionals.length > positional.length) {
    return usageError(
      io,
      `unexpected argument '${positionals[positional.length]}' for 'powerplan ${op.cli.command.join(' ')}'`,
      op.cli.command,
    );
  }
  const missing = positional.slice(positionals.length);
  const requiredMissing = missing.filter((p) => inputFields(op).find((f) => f.name === p)?.required);
  if (requiredMissing.length) {
    return usageError(
      io,
      `'powerplan ${op.cli.command.join(' ')}' needs <${requiredMissing.join('> <')}>`,
      op.cli.command,
    );
  }
  const raw: Record<string, string> = {};
  positional.forEach((name, i) => {
    if (positionals[i] !== undefined) raw[name] = positionals[i]!;
  });
  const input: Record<string, unknown> = {};
  for (const f of inputFields(op)) {
    const v = values[kebab(f.name)];
    if (typeof v === 'boolean') input[f.name] = v;
    else if (typeof v === 'string') raw[f.name] = v;
  }
  return { ...coerceStrings(op, raw), ...input };
};

/**
 * The operation's answer; with --all (or always, for a document that must be whole) every page of
 * a paged one, asked in turn with the largest page and joined into one answer.
 */
const answerOf = async (
  command: OperationCommand,
  input: Record<string, unknown>,
  ctx: Parameters<typeof runOperation>[2],
): Promise<unknown> => {
  const { op, values } = command;
  const every = op.paged && (op.paged.always || values.all === true);
  if (!op.paged || !every) return runOperation(op, input, ctx);
  const items = op.paged.items;
  const max = inputFields(op).find((f) => f.name === 'limit')?.maximum;
  const ask = { ...(max !== undefined && input.limit === undefined ? { limit: max } : {}), ...input };
  const first = (await runOperation(op, ask, ctx)) as Record<string, unknown>;
  const all = [...(first[items] as unknown[])];
  for (let next = first.nextCursor; typeof next === 'string'; ) {
    const page = (await runOperation(op, { ...ask, cursor: next }, ctx)) as Record<string, unknown>;
    all.push(...(page[items] as unknown[]));
    next = page.nextCursor;
  }
  return { ...first, [items]: all, nextCursor: null };
};

export const runOperationCommand = async (command: OperationCommand): Promise<number> => {
  const { op, json, io } = command;
  const input = inputOf(command);
  if (typeof input === 'number') return input;
  // Ctrl-C or SIGTERM stops the service (deps.stop): the operation is cancelled, a comparison
  // restores the original plan first.
  let d: Deps | undefined;
  let cancelled: PowerPlanError | undefined;
  const cancel = (how: string) => () => {
    cancelled = new PowerPlanError('cancelled', `Cancelled by ${how}.`);
    void d?.stop(cancelled);
  };
  const onSigint = cancel('Ctrl-C');
  const onSigterm = cancel('SIGTERM');
  process.once('SIGINT', onSigint);
  process.once('SIGTERM', onSigterm);
  try {
    d = await command.deps();
    if (cancelled) void d.stop(cancelled);
    await d.start();
    const output = await answerOf(command, input, {
      ...d,
      caller: localCaller,
      progress: (p) => {
        if (!io.interactive || json) return;
        const pct = p.total ? ` ${Math.round((100 * p.progress) / p.total)}%` : '';
        io.err(`\r\x1b[2K${pct} ${p.message ?? ''}`);
      },
    });
    if (io.interactive && !json) io.err('\r\x1b[2K');
    const format = op.cli.format as ((o: unknown) => string) | undefined;
    io.out(`${json || !format ? JSON.stringify(output, null, 2) : cliCommandWords(format(output))}\n`);
    return (op.cli.exitCode as ((o: unknown) => number) | undefined)?.(output) ?? 0;
  } catch (e) {
    return command.fail(e);
  } finally {
    await d?.stop();
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  }
};
