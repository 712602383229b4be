/**
 * The perf scripts' command line: node:util's parseArgs, with `--help` (`-h`) printing the script's
 * opening comment, which documents it, and an option it does not know, or one without its value,
 * answered by that message and the same text on stderr with exit code 2 instead of a stack trace
 * (2, as for a run perf:workload refuses: either way nothing was measured).
 *
 *   const { values } = perfArgs(import.meta.filename, { options: { ... } });
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { type ParseArgsConfig, parseArgs } from 'node:util';

/** The opening comment of a script, without its comment marks. */
export const usageOf = (file: string): string => {
  const comment = /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  return comment
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
};

export const perfArgs = <T extends ParseArgsConfig>(
  file: string,
  config: T,
): ReturnType<typeof parseArgs<T>> => {
  const argv = config.args ?? process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usageOf(file)}\n`);
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (e) {
    if (!String((e as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) throw e;
    process.stderr.write(`${basename(file)}: ${(e as Error).message}\n\n${usageOf(file)}\n`);
    process.exit(2);
  }
};
