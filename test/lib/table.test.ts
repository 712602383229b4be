/** The one table printer of the CLI's formatters: tables, fact lists, signed figures. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { facts, signed, table } from '../../src/lib/table.ts';
import { repoRoot } from '../support/deps.ts';

describe('table', () => {
  it('pads every column to its widest cell, two spaces apart, the last one not padded', () => {
    assert.equal(
      table(
        ['id', 'name', 'note'],
        [
          ['a', 'Balanced', ''],
          ['a-much-longer-id', 'x', 'last'],
        ],
      ),
      [
        'id                name      note',
        'a                 Balanced',
        'a-much-longer-id  x         last',
      ].join('\n'),
    );
  });

  it('right-aligns the columns asked, and indents every line', () => {
    assert.equal(
      table(['gap', 'value'], [['1 ms'], ['250 ms', '10834.8 / 10907.9']], ['right'], '  '),
      ['     gap  value', '    1 ms', '  250 ms  10834.8 / 10907.9'].join('\n'),
    );
  });
});

describe('facts', () => {
  it('puts every value in one column, leaves out a fact without value, continues a fact on a line without key', () => {
    assert.deepEqual(
      facts([
        ['Owner', 'tuned'],
        ['Desired plan', undefined],
        ['Read back', '1 of 2 setting(s) NOT in force:'],
        ['', 'governor: powersave (wanted performance)'],
      ]),
      [
        `  Owner${' '.repeat(20)} tuned`,
        `  Read back${' '.repeat(16)} 1 of 2 setting(s) NOT in force:`,
        `  ${' '.repeat(25)} governor: powersave (wanted performance)`,
      ],
    );
  });

  it('takes the width and indent of its answer', () => {
    assert.deepEqual(facts([['CPU:', 'Xeon']], { width: 8, indent: '' }), ['CPU:     Xeon']);
  });
});

describe('signed', () => {
  it('writes the sign, and ±0.0 for a zero as rounded', () => {
    assert.deepEqual(
      [signed(8.94), signed(-19.5), signed(-0.04), signed(0), signed(1.234, 2)],
      ['+8.9', '-19.5', '±0.0', '±0.0', '+1.23'],
    );
  });
});

describe('the CLI formatters', () => {
  it('pad no column by hand: every table and fact list goes through lib/table.ts', () => {
    const src = join(repoRoot, 'src');
    const formatters = [
      ...readdirSync(join(src, 'operations')).map((f) => join('operations', f)),
      'advice/format.ts',
      'bench/format.ts',
      ...readdirSync(join(src, 'surfaces', 'cli'))
        .filter((f) => f.endsWith('-commands.ts'))
        .map((f) => join('surfaces', 'cli', f)),
    ];
    for (const file of formatters) {
      const text = readFileSync(join(src, file), 'utf8');
      assert.doesNotMatch(text, /\.pad(End|Start)\(/, `${file} pads by hand`);
      // A key followed by a run of spaces and a value, laid out by hand in a literal.
      assert.doesNotMatch(text, /[`'][ ]*[A-Z][\w .:]*\S {3,}\$\{/, `${file} aligns a column by hand`);
    }
  });
});
