/** Usage errors (exit code 2): what is wrong, and where the help is. */
import type { CliIo } from './command.ts';

/** Prints `powerplan: <message>` and where the help for `command` (or the whole CLI) is; returns 2. */
export const usageError = (io: CliIo, message: string, command?: string[]): number => {
  const help = command ? `powerplan ${command.join(' ')} --help` : 'powerplan --help';
  io.err(`powerplan: ${message}\nRun '${help}' for usage.\n`);
  return 2;
};

/** Node's parseArgs errors in our words (its own texts quote unevenly and speak of positionals). */
export const parseError = (e: unknown, command: string[]): string => {
  const { code, message } = e as { code?: string; message: string };
  const option = /'(--?[\w-]+)/.exec(message)?.[1];
  const where = `'powerplan ${command.join(' ')}'`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) return `unknown option ${option} for ${where}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
    return /does not take an argument/.test(message)
      ? `${option} is a switch and takes no value (give ${option} alone, or leave it out)`
      : `${option} needs a value (${option} <value> or ${option}=<value>)`;
  }
  return message;
};
