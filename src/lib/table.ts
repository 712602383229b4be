/**
 * Text for people at a terminal, the one table printer of the CLI's formatters: a table whose
 * columns are padded to their widest cell (numbers right-aligned when asked), fact lists (a key
 * column of one width, so that the lists of one answer line up), and signed figures (`+8.9`,
 * `-19.5`, `±0.0`). No formatter pads a column by hand, so columns line up however long a plan
 * name or id is.
 */

export type Align = 'left' | 'right';

/** Columns padded to their widest cell, two spaces apart, each line after `indent`; the last column is not padded. */
export const table = (
  head: string[],
  rows: string[][],
  align: readonly Align[] = [],
  indent = '',
): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [head, ...rows]
    .map((r) =>
      (
        indent +
        r
          .map((c, i) => {
            if (align[i] === 'right') return c.padStart(widths[i]!);
            return i === r.length - 1 ? c : c.padEnd(widths[i]!);
          })
          .join('  ')
      ).trimEnd(),
    )
    .join('\n');
};

/** A fact: its key (empty on a line that continues the one before) and its value, left out when undefined. */
export type Fact = readonly [key: string, value: string | undefined];

export interface FactLayout {
  /** The key column's width: the same for every list of one answer, so that their values line up. */
  width?: number;
  indent?: string;
}

/**
 * One line per fact with a value: `indent`, the key padded to `width`, a space, the value. A key
 * that would leave less than two spaces before the value gets a line of its own, the value below it
 * in the column.
 */
export const facts = (rows: readonly Fact[], { width = 25, indent = '  ' }: FactLayout = {}): string[] =>
  rows.flatMap(([key, value]) => {
    if (value === undefined) return [];
    if (key.length < width) return [`${indent}${key.padEnd(width)} ${value}`];
    return [`${indent}${key}`, `${indent}${''.padEnd(width)} ${value}`];
  });

/** A figure with its sign: `+8.9`, `-19.5`, and `±0.0` for a zero (as rounded) that has none. */
export const signed = (x: number, digits = 1): string => {
  const text = Math.abs(x).toFixed(digits);
  if (Number(text) === 0) return `±${text}`;
  return `${x > 0 ? '+' : '-'}${text}`;
};
