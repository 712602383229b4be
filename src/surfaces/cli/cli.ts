/**
 * The CLI: one subcommand per operation (derived from the registry: words, positionals and flags
 * come from the operation's `cli` binding and input schema), plus the service commands (serve,
 * openapi, ...). Human output by default, exactly the REST JSON with --json.
 * Exit codes: 0 success, 1 the operation failed (including invalid values), 2 usage error.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type Config, configHelp, configVariables, loadConfig } from '../../config.ts';
import { buildDeps, type Deps } from '../../deps.ts';
import { normalizeError, PowerPlanError, startupError } from '../../domain/errors.ts';
import { localCaller } from '../../domain/scopes.ts';
import { guardFileDirectory, guardStateDirectory } from '../../lib/safe-fs.ts';
import { describeStateAccess, stateAccessProblem } from '../../lib/state-access.ts';
import { guardStatePermissions } from '../../lib/windows-acl.ts';
import type { Operation } from '../../operations/define.ts';
import { operations } from '../../operations/index.ts';
import { runOperation } from '../../operations/run.ts';
import { version } from '../../version.ts';
import { toProblem } from '../errors.ts';
import { coerceStrings, inputFields } from '../input.ts';
import type { CliIo, ServiceCommand } from './command.ts';
import { windowsServiceCommands } from './service-commands.ts';
import { tokenCommands } from './token-commands.ts';
import { cliDescription, cliWords, kebab } from './words.ts';

const configKeys = Object.keys(configVariables) as (keyof Config)[];
const globalOptions: NonNullable<ParseArgsConfig['options']> = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  ...Object.fromEntries(configKeys.map((k) => [kebab(k), { type: 'string' as const }])),
};

const serviceCommands: ServiceCommand[] = [
  {
    command: ['serve'],
    summary: 'Start the HTTP server: REST API, MCP, API docs, metrics and the status page.',
    settings: true,
    run: async ({ deps }) => {
      const { serveUntilSignalled } = await import('../http/server.ts');
      await serveUntilSignalled(await deps());
      return 'keep-running';
    },
  },
  {
    command: ['mcp'],
    summary: 'Serve MCP on stdin/stdout for a desktop AI assistant (logs go to stderr).',
    settings: true,
    run: async ({ deps }) => {
      const { serveMcpStdio } = await import('../mcp/stdio.ts');
      await serveMcpStdio(await deps());
      return 'keep-running';
    },
  },
  {
    command: ['openapi'],
    summary: 'Print the OpenAPI 3.1 document.',
    run: async ({ io }) => {
      const { buildOpenApiDocument } = await import('../http/openapi.ts');
      io.out(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
      return 0;
    },
  },
];

/** Registers a further service command (mcp, token, ...); called by the module that implements it. */
export const addServiceCommand = (cmd: ServiceCommand) => serviceCommands.push(cmd);
for (const cmd of [...tokenCommands, ...windowsServiceCommands]) addServiceCommand(cmd);

const optionsFor = (op: Operation): NonNullable<ParseArgsConfig['options']> =>
  Object.fromEntries(
    inputFields(op)
      .filter((f) => !op.cli.positional?.includes(f.name))
      .map((f) => [
        kebab(f.name),
        { type: f.type === 'boolean' ? ('boolean' as const) : ('string' as const) },
      ]),
  );

/** The longest command (by words) that the leading non-flag arguments spell. */
const findCommand = (
  args: string[],
): { words: string[]; op?: Operation; service?: ServiceCommand } | undefined => {
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('-')) {
      const name = a.replace(/^-+/, '');
      if (!a.includes('=') && globalOptions[name]?.type === 'string') i++;
      continue;
    }
    words.push(a);
  }
  const candidates = [
    ...operations.map((op) => ({ words: op.cli.command, op })),
    ...serviceCommands.map((service) => ({ words: service.command, service })),
  ].sort((a, b) => b.words.length - a.words.length);
  return candidates.find((c) => c.words.every((w, i) => words[i] === w));
};

const removeWords = (args: string[], words: string[]): string[] => {
  const rest = [...args];
  for (const w of words) rest.splice(rest.indexOf(w), 1);
  return rest;
};

/** Every command as [usage, summary], those of one group (`fleet`, `token`) when a group is given. */
const commandRows = (group?: string): string[][] =>
  [
    ...operations.map((op) => [
      op.cli.command.join(' ') + (op.cli.positional?.map((p) => ` <${p}>`).join('') ?? ''),
      op.title,
    ]),
    ...serviceCommands.map((c) => [c.usage ?? c.command.join(' '), c.summary]),
  ].filter(([usage]) => group === undefined || usage!.startsWith(`${group} `));

const commandList = (rows: string[][]): string[] => {
  // Long usages (token create ...) go on a line of their own rather than widening every row.
  const width = Math.min(Math.max(...rows.map((r) => r[0]!.length)), 24) + 2;
  return rows.map(([c, s]) =>
    c!.length < width ? `  ${c!.padEnd(width)}${s}` : `  ${c}\n  ${''.padEnd(width)}${s}`,
  );
};

/** `powerplan fleet`, `powerplan token --help`: the commands of that group. */
const groupHelp = (group: string, rows: string[][]): string =>
  [
    `Usage: powerplan ${group} <command> [arguments] [--json]`,
    '',
    'Commands:',
    ...commandList(rows),
    '',
    `Help for one of them: powerplan ${group} <command> --help`,
  ].join('\n');

const generalHelp = (): string => {
  return [
    `powerplan ${version}: read, measure and set the OS power plan.`,
    '',
    'Usage: powerplan <command> [arguments] [--json]',
    '',
    'Commands:',
    ...commandList(commandRows()),
    '',
    'Global options:',
    '  --json                 print exactly what the REST API returns',
    '  -h, --help             help for a command: powerplan <command> --help',
    ...configKeys.map((k) => `  --${kebab(k).padEnd(21)}overrides ${configVariables[k]}`),
  ].join('\n');
};

/** One option in --help: its name, then its text; a name too long for the column gets a line of its own. */
const OPTION_COLUMN = 26;
const optionRow = (name: string, text: string): string =>
  name.length < OPTION_COLUMN - 1
    ? `  ${name.padEnd(OPTION_COLUMN)}${text}`
    : `  ${name}\n  ${''.padEnd(OPTION_COLUMN)}${text}`;

const commandHelp = (op: Operation): string => {
  const fields = inputFields(op);
  const usage = `powerplan ${op.cli.command.join(' ')}${(op.cli.positional ?? []).map((p) => ` <${p}>`).join('')} [options] [--json]`;
  const rows = fields.map((f) => {
    const name = op.cli.positional?.includes(f.name)
      ? `<${f.name}>`
      : `--${kebab(f.name)}${f.type === 'boolean' ? '' : ' <value>'}`;
    const extra = [
      f.enum ? `one of: ${f.enum.join(', ')}` : '',
      // A flag that is off unless given needs no "default: false".
      f.default !== undefined && f.default !== false ? `default: ${String(f.default)}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    return optionRow(name, `${cliWords(f.description ?? '')}${extra ? ` (${extra})` : ''}`);
  });
  return [
    `${op.title}\n`,
    cliDescription(op),
    '',
    `Usage: ${usage}`,
    ...(rows.length ? ['', 'Options:', ...rows] : []),
  ].join('\n');
};

/** The settings as options, each with its variable: what `serve --help` (and `mcp --help`) lists. */
const settingRows = (): string[] =>
  configKeys.map((k) => optionRow(`--${kebab(k)} <value>`, `${configHelp[k]} [env: ${configVariables[k]}]`));

const serviceHelp = (cmd: ServiceCommand): string =>
  [
    cmd.summary,
    '',
    `Usage: powerplan ${cmd.usage ?? cmd.command.join(' ')}${cmd.settings ? ' [options]' : ''}`,
    ...(cmd.settings
      ? [
          '',
          'Options (each also read from its POWERPLAN_* variable; a flag wins over the variable):',
          ...settingRows(),
        ]
      : []),
  ].join('\n');

/** A usage error: what is wrong, and where the help for the command (or the whole CLI) is. */
const usageError = (io: CliIo, message: string, command?: string[]): number => {
  const help = command ? `powerplan ${command.join(' ')} --help` : 'powerplan --help';
  io.err(`powerplan: ${message}\nRun '${help}' for usage.\n`);
  return 2;
};

/** Node's parseArgs errors in our words (its own texts quote unevenly and speak of positionals). */
const parseError = (e: unknown, command: string[]): string => {
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

  const fail = (e: unknown): number => {
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

  const op = found.op!;
  const positional = op.cli.positional ?? [];
  if (parsed.positionals.length > positional.length) {
    return usageError(
      io,
      `unexpected argument '${parsed.positionals[positional.length]}' for 'powerplan ${op.cli.command.join(' ')}'`,
      op.cli.command,
    );
  }
  const missing = positional.slice(parsed.positionals.length);
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
    if (parsed.positionals[i] !== undefined) raw[name] = parsed.positionals[i]!;
  });
  const input: Record<string, unknown> = {};
  for (const f of inputFields(op)) {
    const v = values[kebab(f.name)];
    if (typeof v === 'boolean') input[f.name] = v;
    else if (typeof v === 'string') raw[f.name] = v;
  }

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
    d = await getDeps();
    if (cancelled) void d.stop(cancelled);
    await d.start();
    const output = await runOperation(
      op,
      { ...coerceStrings(op, raw), ...input },
      {
        ...d,
        caller: localCaller,
        progress: (p) => {
          if (!io.interactive || json) return;
          const pct = p.total ? ` ${Math.round((100 * p.progress) / p.total)}%` : '';
          io.err(`\r\x1b[2K${pct} ${p.message ?? ''}`);
        },
      },
    );
    if (io.interactive && !json) io.err('\r\x1b[2K');
    const format = op.cli.format as ((o: unknown) => string) | undefined;
    io.out(`${json || !format ? JSON.stringify(output, null, 2) : format(output)}\n`);
    return (op.cli.exitCode as ((o: unknown) => number) | undefined)?.(output) ?? 0;
  } catch (e) {
    return fail(e);
  } finally {
    await d?.stop();
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  }
};
