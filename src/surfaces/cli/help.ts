/** The CLI's help: the whole CLI, a group of commands (`fleet`, `token`), one command. */
import { configHelp, configVariables } from '../../config.ts';
import { facts } from '../../lib/table.ts';
import type { Operation } from '../../operations/define.ts';
import { version } from '../../version.ts';
import { inputFields } from '../input.ts';
import type { ServiceCommand } from './command.ts';
import { commandRows, configKeys } from './registry.ts';
import { cliDescription, cliWords, kebab } from './words.ts';

/** Commands and their summaries; a long usage (token create ...) gets a line of its own rather than widening every row. */
const commandList = (rows: [string, string][]): string[] =>
  facts(rows, { width: Math.min(Math.max(...rows.map((r) => r[0].length)), 24) + 1 });

/** `powerplan fleet`, `powerplan token --help`: the commands of that group. */
export const groupHelp = (group: string, rows: [string, string][]): string =>
  [
    `Usage: powerplan ${group} <command> [arguments] [--json]`,
    '',
    'Commands:',
    ...commandList(rows),
    '',
    `Help for one of them: powerplan ${group} <command> --help`,
  ].join('\n');

export const generalHelp = (): string =>
  [
    `powerplan ${version}: read, measure and set the OS power plan.`,
    '',
    'Usage: powerplan <command> [arguments] [--json]',
    '',
    'Commands:',
    ...commandList(commandRows()),
    '',
    'Global options:',
    ...facts(
      [
        ['--json', 'print exactly what the REST API returns'],
        ['-h, --help', 'help for a command: powerplan <command> --help'],
        ...configKeys.map((k): [string, string] => [`--${kebab(k)}`, `overrides ${configVariables[k]}`]),
      ],
      { width: 22 },
    ),
  ].join('\n');

/** Options in --help: a name, then its text; a name too long for the column gets a line of its own. */
const optionRows = (rows: [string, string][]): string[] => facts(rows, { width: 25 });

export const commandHelp = (op: Operation): string => {
  const fields = inputFields(op);
  const usage = `powerplan ${op.cli.command.join(' ')}${(op.cli.positional ?? []).map((p) => ` <${p}>`).join('')} [options] [--json]`;
  const rows = fields.map((f): [string, string] => {
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
    return [name, `${cliWords(f.description ?? '')}${extra ? ` (${extra})` : ''}`];
  });
  return [
    `${op.title}\n`,
    cliDescription(op),
    '',
    `Usage: ${usage}`,
    ...(rows.length ? ['', 'Options:', ...optionRows(rows)] : []),
  ].join('\n');
};

/** The settings as options, each with its variable: what `serve --help` (and `mcp --help`) lists. */
const settingRows = (): string[] =>
  optionRows(
    configKeys.map((k) => [`--${kebab(k)} <value>`, `${configHelp[k]} [env: ${configVariables[k]}]`]),
  );

export const serviceHelp = (cmd: ServiceCommand): string =>
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
