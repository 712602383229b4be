/**
 * `powerplan compare` and `powerplan benchmarks` as a person reads them, through the CLI on the
 * simulated backend: columns that stay aligned with a 55-character plan name, signs written once
 * (`-14.8%`, never `+-14.8%`), every range marked by the one verdict rule (no mark when it excludes
 * 0, `~` when it touches 0, `?` for a noisy run), and reasons that agree with the advice.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { runCli } from '../support/processes.ts';

const LONG = 'High performance for the nightly batch and the OLTP peak';

/** The start of each column of a table row: where a run of two spaces ends. */
const columnStarts = (line: string): number[] => {
  const starts = [0];
  for (const m of line.matchAll(/ {2,}(?=\S)/g)) starts.push(m.index! + m[0].length);
  return starts;
};

describe('compare and benchmarks output', () => {
  const t = depsPerBlock();

  it('a comparison prints an aligned table whose marks follow the ranges, with reasons that agree with the advice', async () => {
    // A plan name longer than any column width the old output assumed.
    // (the simulated backend writes its state file at the first change)
    assert.equal((await runCli(['set', 'high-performance'], t.env)).code, 0);
    assert.equal((await runCli(['set', 'balanced'], t.env)).code, 0);
    const file = join(t.dir, 'simulated-backend.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as { plans: { id: string; name: string }[] };
    state.plans.find((p) => p.id === SCHEME.highPerformance)!.name = LONG;
    await writeFile(file, JSON.stringify(state));

    const r = await runCli(
      [
        'compare',
        '--plans',
        SCHEME.highPerformance,
        '--settle-ms',
        '0',
        '--threads',
        '1',
        '--idle-gaps-ms',
        '50,200',
        '--force',
      ],
      t.env,
      90_000,
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const head = lines.findIndex((l) => l.startsWith('plan '));
    assert.ok(head > 0, r.stdout);
    const [header, original, candidate] = lines.slice(head, head + 3) as [string, string, string];
    assert.ok(original.startsWith('Balanced '), original);
    assert.ok(candidate.startsWith(`${LONG} `), candidate);
    // Every column of every row starts where its header does (numbers are right-aligned, so compare ends too).
    const benchmarkAt = header.indexOf('benchmark');
    assert.equal(original.indexOf('bm-'), benchmarkAt);
    assert.equal(candidate.indexOf('bm-'), benchmarkAt);
    assert.equal(columnStarts(candidate).length >= 9, true, candidate);
    const headerEnds = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => m.index! + m[0].length);
    for (const row of [original, candidate]) {
      const rowEnds = [...row.matchAll(/\S+(?: \S+)*/g)].map((m) => m.index! + m[0].length);
      // The right-aligned columns (burst .. all vs original) end where their headers end.
      assert.deepEqual(rowEnds.slice(2, 9), headerEnds.slice(2, 9), `${header}\n${row}`);
    }
    assert.doesNotMatch(r.stdout, /\+-|-\+/);

    // The marks: one rule, read back from what is printed.
    const ranges = [...candidate.matchAll(/([+-±][\d.]+)% \((-?[\d.]+)\.\.(-?[\d.]+)\)( [~?])?/g)];
    assert.equal(ranges.length, 3, candidate);
    const noisy = /\bnoisy$/.test(candidate) || /\bnoisy$/.test(original);
    for (const [, , lowText, highText, mark] of ranges) {
      const low = Number(lowText);
      const high = Number(highText);
      if (noisy) assert.equal(mark, ' ?', candidate);
      else if (low > 0 || high < 0) assert.equal(mark, undefined, candidate);
      else assert.equal(mark, ' ~', candidate);
    }

    // Reasons and advice agree: a "stay" after rules that pointed to a change says why.
    const summary = lines[lines.indexOf('') + 1]!;
    const reasons = r.stdout.split('Reasons:\n')[1]!.split(/\n(?! {2}- )/)[0]!;
    if (summary.startsWith('Nothing to change')) {
      assert.match(reasons, /outweighs them/);
      assert.doesNotMatch(summary, /Switch/);
    } else {
      assert.match(summary, /^Switch from Balanced to /);
      assert.doesNotMatch(reasons, /outweighs them/);
    }
    for (const line of reasons.split('\n').filter((l) => /ran .* (faster|slower) under/.test(l))) {
      const m =
        /\(range (-?[\d.]+)\.\.(-?[\d.]+)%(, within the noise|, from a noisy run: not judged)?\)/.exec(line);
      assert.ok(m, line);
      const [low, high] = [Number(m[1]), Number(m[2])];
      if (m[3] === ', within the noise') assert.ok(low <= 0 && high >= 0, line);
      if (m[3] === undefined) assert.ok(low > 0 || high < 0, line);
    }

    const list = await runCli(['benchmarks'], t.env);
    assert.equal(list.code, 0, list.stderr);
    const rows = list.stdout.split('\n').filter((l) => /^(id|bm-)/.test(l));
    assert.equal(rows.length, 3, list.stdout);
    const planAt = rows[0]!.indexOf('plan');
    for (const row of rows.slice(1)) {
      assert.equal(row.indexOf('  ', planAt - 3) + 2, planAt, row);
      assert.match(row, / {2}[+-±]\d+\.\d% {2}/);
    }
  });
});
