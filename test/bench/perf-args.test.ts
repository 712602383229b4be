/**
 * The perf scripts' command line (perf/lib/args.ts): every script takes `--help` and prints its
 * opening comment; an unknown option or a missing value is one line and that usage on stderr,
 * exit code 2, no stack trace; and every script reads its options through it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { usageOf } from '../../perf/lib/args.ts';
import { repoRoot } from '../support/deps.ts';

const perf = join(repoRoot, 'perf');
const tsx = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('perf scripts: the command line', () => {
  it('--help prints the opening comment, with the npm run line; exit 0, nothing measured', () => {
    const r = tsx(join(perf, 'catalog.ts'), '--help');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), usageOf(join(perf, 'catalog.ts')));
    assert.match(r.stdout, /npm run perf:catalog -- \[--before DIR\]/);
    assert.doesNotMatch(r.stdout, /tools\/list KB/, 'no measurement ran');
  });

  it('an unknown option or a missing value: one line and the usage on stderr, exit 2, no stack', () => {
    for (const [argv, said] of [
      [['--nope'], /^workload\.ts: Unknown option '--nope'/],
      [['--rounds'], /^workload\.ts: Option '--rounds <value>' argument missing/],
    ] as const) {
      const r = tsx(join(perf, 'workload.ts'), ...argv);
      assert.equal(r.status, 2, argv.join(' '));
      assert.match(r.stderr, said);
      assert.match(r.stderr, /npm run perf:workload -- \[--rounds 3\]/);
      assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
      assert.equal(r.stdout, '');
    }
  });

  it('perf:workload --only: a text no workload is named by is refused before anything starts', () => {
    const r = tsx(join(perf, 'workload.ts'), '--only', 'nothing of the kind');
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /^workload\.ts: --only nothing of the kind: no workload's name contains it \(.*pg_restore/,
    );
    assert.equal(r.stdout, '', 'no header, no cluster');
  });

  it('every script with options reads them through perfArgs, and documents an npm run line', () => {
    const scripts = readdirSync(perf).filter((f) => f.endsWith('.ts') && f !== 'server.ts');
    assert.ok(scripts.length >= 13);
    for (const f of scripts) {
      const text = readFileSync(join(perf, f), 'utf8');
      assert.doesNotMatch(text, /\bparseArgs\(/, `${f} parses its options without perfArgs`);
      if (text.includes('perfArgs(')) assert.match(usageOf(join(perf, f)), /npm run perf:/, f);
    }
  });
});
