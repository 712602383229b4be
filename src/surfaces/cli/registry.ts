/**
 * The CLI's commands: one per operation (its words from the operation's `cli` binding, its flags
 * from the input schema) and the service commands (serve, mcp, openapi, token, service), with the
 * global options and the lookup of the command that the arguments spell.
 */
import type { ParseArgsConfig } from 'node:util';
import { type Config, configVariables } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import type { Operation } from '../../operations/define.ts';
import { operations } from '../../operations/index.ts';
import { inputFields } from '../input.ts';
import type { ServiceCommand } from './command.ts';
import { windowsServiceCommands } from './service-commands.ts';
import { tokenCommands } from './token-commands.ts';
import { kebab } from './words.ts';

export const configKeys = Object.keys(configVariables) as (keyof Config)[];
export const globalOptions: NonNullable<ParseArgsConfig['options']> = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  ...Object.fromEntries(configKeys.map((k) => [kebab(k), { type: 'string' as const }])),
};

/** A command that serves until signalled, its server loaded only when it runs. */
const serving = (
  command: string,
  summary: string,
  load: () => Promise<(deps: Deps) => Promise<unknown>>,
): ServiceCommand => ({
  command: [command],
  summary,
  settings: true,
  run: async ({ deps }) => {
    const serve = await load();
    await serve(await deps());
    return 'keep-running';
  },
});

export const serviceCommands: ServiceCommand[] = [
  serving(
    'serve',
    'Start the HTTP server: REST API, MCP, API docs, metrics and the status page.',
    async () => (await import('../http/server.ts')).serveUntilSignalled,
  ),
  serving(
    'mcp',
    'Serve MCP on stdin/stdout for a desktop AI assistant (logs go to stderr).',
    async () => (await import('../mcp/stdio.ts')).serveMcpStdio,
  ),
  {
    command: ['openapi'],
    summary: 'Print the OpenAPI 3.1 document.',
    run: async ({ io }) => {
      const { buildOpenApiDocument } = await import('../http/openapi.ts');
      io.out(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
      return 0;
    },
  },
  ...tokenCommands,
  ...windowsServiceCommands,
];

/** The flags of an operation's command: one per input field that is not a positional; --all for a paged answer. */
export const optionsFor = (op: Operation): NonNullable<ParseArgsConfig['options']> => ({
  ...Object.fromEntries(
    inputFields(op)
      .filter((f) => !op.cli.positional?.includes(f.name))
      .map((f) => [
        kebab(f.name),
        { type: f.type === 'boolean' ? ('boolean' as const) : ('string' as const) },
      ]),
  ),
  ...(op.paged && !op.paged.always ? { all: { type: 'boolean' as const } } : {}),
});

export interface FoundCommand {
  words: string[];
  op?: Operation;
  service?: ServiceCommand;
}

/** The longest command (by words) that the leading non-flag arguments spell. */
export const findCommand = (args: string[]): FoundCommand | undefined => {
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

/** The arguments without the command's words. */
export const removeWords = (args: string[], words: string[]): string[] => {
  const rest = [...args];
  for (const w of words) rest.splice(rest.indexOf(w), 1);
  return rest;
};

/** Every command as [usage, summary], those of one group (`fleet`, `token`) when a group is given. */
export const commandRows = (group?: string): [string, string][] =>
  [
    ...operations.map((op): [string, string] => [
      op.cli.command.join(' ') + (op.cli.positional?.map((p) => ` <${p}>`).join('') ?? ''),
      op.title,
    ]),
    ...serviceCommands.map((c): [string, string] => [c.usage ?? c.command.join(' '), c.summary]),
  ].filter(([usage]) => group === undefined || usage.startsWith(`${group} `));
