/**
 * The CLI's words for what the API and MCP texts name: an operation (`list_holds`, with or without
 * its REST route beside it) is the command that runs it (`powerplan holds`), an input field (`dryRun: true`, `durationSeconds`, `` `since` ``)
 * is its flag (`--dry-run`, `--duration-seconds`, `--since`) or its argument (`<plan>`). Operation
 * descriptions and error messages are written once, for every surface; the CLI passes what it
 * prints through `cliWords`, so help and errors speak of commands and flags.
 */
import type { Operation } from '../../operations/define.ts';
import { operations } from '../../operations/index.ts';
import { inputFields } from '../input.ts';

export const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** `powerplan <words>` for each operation name. */
const commands = new Map(operations.map((op) => [op.name, `powerplan ${op.cli.command.join(' ')}`]));

interface FieldWord {
  flag: string;
  boolean: boolean;
}

/** Every input field of every operation with its CLI spelling (a positional is `<name>`). */
const fieldWords = (): Map<string, FieldWord> => {
  const words = new Map<string, FieldWord>();
  for (const op of operations) {
    for (const f of inputFields(op)) {
      const positional = op.cli.positional?.includes(f.name) ?? false;
      if (words.has(f.name) && positional) continue;
      words.set(f.name, {
        flag: positional ? `<${f.name}>` : `--${kebab(f.name)}`,
        boolean: f.type === 'boolean',
      });
    }
  }
  return words;
};

let fields: Map<string, FieldWord> | undefined;
let fieldPattern: RegExp | undefined;
let camelPattern: RegExp | undefined;
let leadPattern: RegExp | undefined;
let assignPattern: RegExp | undefined;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const opPattern = new RegExp(`\\b(${[...commands.keys()].map(escapeRe).join('|')})\\b`, 'g');

/**
 * An answer's text with the operations it names as the commands that run them (`run
 * run_cpu_benchmark` -> `run powerplan bench`); its field names stay, since an answer's text
 * speaks of what it shows, not of flags.
 */
export const cliCommandWords = (text: string): string =>
  text.replace(opPattern, (name) => commands.get(name) ?? name);

/** The text with operation names and input fields in CLI words. */
export const cliWords = (text: string): string => {
  fields ??= fieldWords();
  const names = [...fields.keys()].sort((a, b) => b.length - a.length).map(escapeRe);
  // `field: true` / `field: false` for a boolean field, and any field in backquotes.
  fieldPattern ??= new RegExp(`\`(${names.join('|')})\`|\\b(${names.join('|')}): (true|false)\\b`, 'g');
  // A camelCase field name anywhere (dryRun, durationSeconds): no English word looks like one.
  camelPattern ??= new RegExp(`\\b(${names.filter((n) => /[A-Z]/.test(n)).join('|')})\\b`, 'g');
  // A validation message names its field first: `since: must be ...; limit: ...`.
  leadPattern ??= new RegExp(`(^|; )(${names.join('|')}): `, 'g');
  // `benchmark=run`, as a query string would say it.
  assignPattern ??= new RegExp(`\\b(${names.join('|')})=([\\w-]+)`, 'g');
  const flag = (name: string) => fields!.get(name)?.flag ?? name;
  const routesLeftOut = text
    // A text that gives the CLI form itself: `force: true (CLI: --force)`, `POWERPLAN_FLEET_FILE (CLI: --fleet FILE)`.
    .replace(/\b\w+: [\w-]+ \(CLI: ([^)]*)\)/g, '$1')
    .replace(/\b(POWERPLAN_\w+) \(CLI: ([^)]*)\)/g, '$2 or $1')
    .replace(/\(CLI: ([^)]*)\)/g, '(e.g. $1)')
    // The REST route beside an operation's name (`run_cpu_benchmark (POST /v1/benchmarks)`): the command says it.
    .replace(/ \((?:GET|POST|PUT|PATCH|DELETE) \/[^\s)]*\)/g, '');
  return cliCommandWords(routesLeftOut)
    .replace(leadPattern, (_w, before: string, name: string) => `${before}${flag(name)}: `)
    .replace(assignPattern, (_w, name: string, value: string) => `${flag(name)} ${value}`)
    .replace(fieldPattern, (whole, quoted: string | undefined, name: string | undefined, value?: string) => {
      const f = fields!.get(quoted ?? name ?? '');
      if (!f) return whole;
      if (quoted) return f.flag;
      if (!f.boolean) return whole;
      return value === 'true' ? f.flag : `without ${f.flag}`;
    })
    .replace(camelPattern, flag);
};

/** An operation's description in CLI words: its own CLI text when it has one. */
export const cliDescription = (op: Operation): string => cliWords(op.cli.description ?? op.description);
