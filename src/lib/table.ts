/**
 * Text for people at a terminal: a table whose columns are padded to their widest cell (numbers
 * right-aligned when asked), and signed figures (`+8.9`, `-19.5`, `±0.0`). Every CLI formatter
 * that prints columns uses `table`, so columns line up however long a plan name or id is.
 */

export type Align = 'left' | 'right';

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export const table = (head: string[], rows: string[][], align: readonly Align[] = []): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [head, ...rows]
    .map((r) =>
      r
        .map((c, i) => {
          if (align[i] === 'right') return c.padStart(widths[i]!);
          return i === r.length - 1 ? c : c.padEnd(widths[i]!);
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};

/** A figure with its sign: `+8.9`, `-19.5`, and `±0.0` for a zero (as rounded) that has none. */
export const signed = (x: number, digits = 1): string => {
  const text = Math.abs(x).toFixed(digits);
  if (Number(text) === 0) return `±${text}`;
  return `${x > 0 ? '+' : '-'}${text}`;
};
