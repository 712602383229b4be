/**
 * The CLI speaks CLI: every command that `powerplan --help` lists is asked for its `--help` (as a
 * child process), and none names an API operation (`list_holds`), an input field as the API spells
 * it (`dryRun`, `durationSeconds: 60`, `force: true`, `benchmark=run`) or runs an option into its
 * text. `serve --help` lists every setting with its variable; usage errors are in our words; times
 * and durations are taken as the flags say (`audit --since 1h`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configVariables } from '../../src/config.ts';
import { operations } from '../../src/operations/index.ts';
import { inputFields } from '../../src/surfaces/input.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { runCli } from '../support/processes.ts';

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const fieldNames = [...new Set(operations.flatMap((op) => inputFields(op).map((f) => f.name)))];
const apiNames: RegExp[] = [
  new RegExp(`\\b(${operations.map((op) => op.name).join('|')})\\b`),
  new RegExp(`\\b(${fieldNames.filter((n) => /[A-Z]/.test(n)).join('|')})\\b`),
  new RegExp(`\\b(${fieldNames.join('|')}): (true|false|\\d)`),
  new RegExp(`\\b(${fieldNames.join('|')})=`),
  new RegExp(`\`(${fieldNames.join('|')})\``),
];

/** The command words of each line under "Commands:" of `powerplan --help`. */
const listedCommands = (help: string): string[][] => {
  const section = help.split('Commands:\n')[1]!.split('\n\n')[0]!;
  return section
    .split('\n')
    .filter((line) => /^ {2}[a-z]/.test(line))
    .map((line) =>
      line
        .trim()
        .split(/\s+/)
        .filter(
          (w, i, all) => /^[a-z][a-z-]*$/.test(w) && all.slice(0, i).every((x) => /^[a-z][a-z-]*$/.test(x)),
        ),
    )
    .map((words) =>
      words.slice(0, words.length > 1 && ['fleet', 'token', 'desired'].includes(words[0]!) ? 2 : 1),
    )
    .filter((words) => words.length > 0);
};

describe('the CLI in CLI words', () => {
  const t = depsPerBlock();

  it('no --help names an API operation or field, and every option stands apart from its text', async () => {
    const main = await runCli(['--help'], t.env);
    assert.equal(main.code, 0);
    const commands = listedCommands(main.stdout);
    // Every operation's command and the service commands are in the list walked below.
    for (const op of operations)
      assert.ok(
        commands.some((c) => c.join(' ') === op.cli.command.join(' ')),
        `${op.cli.command.join(' ')} is listed`,
      );
    for (const service of [['serve'], ['mcp'], ['openapi'], ['token', 'create']])
      assert.ok(
        commands.some((c) => c.join(' ') === service.join(' ')),
        service.join(' '),
      );

    const texts: [string, string][] = [['powerplan --help', main.stdout]];
    for (const words of commands) {
      const r = await runCli([...words, '--help'], t.env);
      assert.equal(r.code, 0, `${words.join(' ')} --help: ${r.stderr}`);
      texts.push([`powerplan ${words.join(' ')} --help`, r.stdout]);
    }
    for (const [what, text] of texts) {
      for (const pattern of apiNames) {
        const m = pattern.exec(text);
        assert.equal(m, null, `${what} says '${m?.[0]}' (API words):\n${text}`);
      }
      for (const line of text.split('\n').filter((l) => /^ {2}--/.test(l))) {
        // `--name <value>` then two spaces or the end of the line, never `<value>How long`.
        assert.match(line, /^ {2}--[a-z-]+(?: <[a-z-]+>)?(?: {2,}\S|$)/, `${what}: ${line}`);
      }
    }
    assert.ok(texts.length > 25, `walked ${texts.length} help texts`);
  });

  it('serve --help lists every setting as a flag with its variable', async () => {
    const r = await runCli(['serve', '--help'], t.env);
    assert.equal(r.code, 0);
    for (const [key, variable] of Object.entries(configVariables)) {
      const line = r.stdout.split('\n').findIndex((l) => l.startsWith(`  --${kebab(key)} `));
      assert.ok(line >= 0, `--${kebab(key)} is listed`);
      // The variable is on the option's line, or on the next one when the name is long.
      const lines = r.stdout
        .split('\n')
        .slice(line, line + 2)
        .join('\n');
      assert.match(lines, new RegExp(`\\[env: ${variable}\\]`), `--${kebab(key)} names ${variable}`);
    }
  });

  it('usage errors are ours: an unknown option, a missing value, a switch given a value', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['set', 'balanced', '--bogus'],
        /^powerplan: unknown option --bogus for 'powerplan set'\nRun 'powerplan set --help' for usage\.\n$/,
      ],
      [['audit', '--limit'], /^powerplan: --limit needs a value/],
      [['set', 'balanced', '--dry-run=yes'], /^powerplan: --dry-run is a switch and takes no value/],
      [['release'], /^powerplan: 'powerplan release' needs <id>\nRun 'powerplan release --help'/],
    ];
    for (const [args, pattern] of cases) {
      const r = await runCli(args, t.env);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, pattern);
      assert.doesNotMatch(r.stderr, /positional|-- "/);
      assert.equal((r.stderr.match(/'/g) ?? []).length % 2, 0, `balanced quotes: ${r.stderr}`);
    }
  });

  it('errors of an operation name flags and commands: hold without a duration, a bad --since', async () => {
    const hold = await runCli(['hold', 'balanced'], t.env);
    assert.equal(hold.code, 1);
    assert.match(hold.stderr, /give exactly one of --for \(e\.g\. 2h\) and --duration-seconds/);
    const since = await runCli(['audit', '--since', 'yesterday'], t.env);
    assert.equal(since.code, 1);
    assert.match(
      since.stderr,
      /^powerplan: --since: must be an ISO 8601 time .* or a duration ago such as 1h/,
    );
    for (const r of [hold, since]) for (const pattern of apiNames) assert.doesNotMatch(r.stderr, pattern);
  });

  it('audit --since takes a duration ago (1h) and an ISO time, as its help says', async () => {
    assert.equal((await runCli(['set', 'high-performance'], t.env)).code, 0);
    const recent = await runCli(['audit', '--since', '1h'], t.env);
    assert.equal(recent.code, 0, recent.stderr);
    assert.match(recent.stdout, /set_power_plan\s+changed Balanced -> High performance/);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const none = await runCli(['audit', '--since', future], t.env);
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout.trim(), 'No audit records.');
    const json = await runCli(['audit', '--since', '30m', '--json'], t.env);
    // The refused attempts of the tests above are there too, as refusals.
    const records = (JSON.parse(json.stdout) as { records: { operation: string; result: string }[] }).records;
    assert.deepEqual(
      records.filter((r) => r.result !== 'refused').map((r) => `${r.operation} ${r.result}`),
      ['set_power_plan changed'],
    );
  });
});
