/**
 * The CLI: one subcommand per operation (derived from the registry: words, positionals and flags
 * come from the operation's `cli` binding and input schema), plus the service commands (serve,
 * openapi, ...). Human output by default, exactly the REST JSON with --json.
 * Exit codes: 0 success, 1 the operation failed (including invalid values), 2 usage error.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type Config, loadConfig } from '../../config.ts';
import { buildDeps, type Deps } from '../../deps.ts';
import { normalizeError, startupError } from '../../domain/errors.ts';
import { guardFileDirectory, guardStateDirectory } from '../../lib/safe-fs.ts';
import { describeStateAccess, stateAccessProblem } from '../../lib/state-access.ts';
import { guardStatePermissions } from '../../lib/windows-state-guard.ts';
import { version } from '../../version.ts';
import { toProblem } from '../errors.ts';
import type { CliIo } from './command.ts';
import { commandHelp, generalHelp, groupHelp, serviceHelp } from './help.ts';
import { runOperationCommand } from './operation-command.ts';
import { commandRows, configKeys, findCommand, globalOptions, optionsFor, removeWords } from './registry.ts';
import { parseError, usageError } from './usage.ts';
import { cliWords, kebab } from './words.ts';

export const runCli = async (argv: string[], io: CliIo): Promise<number | 'keep-running'> => {
  const found = findCommand(argv);
  if (!found) {
    if (argv.includes('--version')) {
      io.out(`${version}\n`);
      return 0;
    }
    const help = argv.includes('--help') || argv.includes('-h');
    const words = argv.filter((a) => !a.startsWith('-'));
    const group = words[0] !== undefined ? commandRows(words[0]) : [];
    if (group.length > 0) {
      // A group word alone (`powerplan fleet`) or with a word that is none of its commands.
      if (help && words.length === 1) {
        io.out(`${groupHelp(words[0]!, group)}\n`);
        return 0;
      }
      io.err(
        `powerplan: ${words.length === 1 ? `'${words[0]}' needs a command` : `unknown command '${words.slice(0, 2).join(' ')}'`}\n${groupHelp(words[0]!, group)}\n`,
      );
      return 2;
    }
    if (argv.length === 0 || help || argv[0] === 'help') {
      io.out(`${generalHelp()}\n`);
      return argv.length === 0 ? 2 : 0;
    }
    return usageError(io, words[0] ? `unknown command '${words[0]}'` : 'no command given');
  }

  const options = { ...globalOptions, ...(found.op ? optionsFor(found.op) : (found.service?.options ?? {})) };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: removeWords(argv, found.words),
      options,
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    return usageError(io, parseError(e, found.words), found.words);
  }
  const values = parsed.values as Record<string, unknown>;
  const json = values.json === true;

  if (values.help) {
    io.out(`${found.op ? commandHelp(found.op) : serviceHelp(found.service!)}\n`);
    return 0;
  }

  const configFlags = Object.fromEntries(
    configKeys
      .filter((k) => typeof values[kebab(k)] === 'string')
      .map((k) => [k, values[kebab(k)] as string]),
  );
  let config: Config | undefined;
  const getConfig = () => {
    config ??= loadConfig(io.env, configFlags);
    return config;
  };
  let deps: Deps | undefined;
  const getDeps = async () => {
    // A state directory (or token file directory) that another user could plant, replace or write
    // stops the command (exit code 2). On Windows (or when asked) the state directory gets its ACL
    // at creation, and one that non-administrators can write stops the command too.
    const c = getConfig();
    if (!deps) {
      guardStateDirectory(c.stateDir);
      if (c.tokenFile) guardFileDirectory(c.tokenFile, 'token file');
    }
    if (!deps && (c.aclCheck === 'always' || process.platform === 'win32')) {
      await guardStatePermissions(c, {
        icacls: c.icacls,
        powershell: c.powershell,
        mkdir: (path) => mkdirSync(path, { recursive: true, mode: 0o700 }),
      });
    }
    // A state directory written by another user stops every command here, once, saying what to do.
    const access = deps || !existsSync(c.stateDir) ? undefined : stateAccessProblem(c.stateDir);
    if (access) throw startupError(describeStateAccess(c.stateDir, access));
    // A one-shot command reports through its output and exit code; its log shows only warnings
    // unless a level was asked for.
    const asked = io.env.POWERPLAN_LOG_LEVEL !== undefined || typeof values['log-level'] === 'string';
    deps ??= buildDeps(found.op && !asked ? { ...getConfig(), logLevel: 'warn' } : getConfig());
    return deps;
  };

  /** The out-of-space error in `e` or its causes (ENOSPC, EDQUOT), if that is what it is. */
  const diskFull = (e: unknown): NodeJS.ErrnoException | undefined => {
    for (let x = e as NodeJS.ErrnoException | undefined, i = 0; x && i < 5; x = x.cause as never, i++)
      if (x.code === 'ENOSPC' || x.code === 'EDQUOT') return x;
    return undefined;
  };
  const fail = (e: unknown): number => {
    const full = diskFull(e);
    if (full) {
      // A full disk is no bug of ours: one line saying where and what to do, never a stack trace.
      io.err(
        `powerplan: the disk is full (${full.code}${full.syscall ? ` at ${full.syscall}` : ''}${full.path ? ` of ${full.path}` : ''}): ` +
          `free space on the disk of ${getConfig().stateDir} (or choose another state directory with POWERPLAN_STATE_DIR), then run it again.\n`,
      );
      return 2;
    }
    const err = normalizeError(e);
    if (
      (err.code === 'invalid_input' && err.message.startsWith('Invalid configuration')) ||
      err.details?.unsafePermissions === true ||
      err.details?.startup === true
    ) {
      io.err(`powerplan: ${err.message}\n`);
      return 2;
    }
    if (json) io.out(`${JSON.stringify(toProblem(err), null, 2)}\n`);
    io.err(`powerplan: ${cliWords(err.message)}\n`);
    if (err.code === 'internal') io.err(`${String((err.cause as Error | undefined)?.stack ?? err.cause)}\n`);
    return 1;
  };

  if (found.service) {
    try {
      return await found.service.run({
        values,
        positionals: parsed.positionals,
        config: getConfig,
        deps: getDeps,
        io,
      });
    } catch (e) {
      return fail(e);
    }
  }

  return runOperationCommand({
    op: found.op!,
    values,
    positionals: parsed.positionals,
    json,
    deps: getDeps,
    io,
    fail,
  });
};
