/**
 * Every TypeScript file of the product, its tests and its perf scripts can run under Node's own
 * type stripping, which is how the Windows tier runs them as Windows processes (no tsx there):
 * no parameter properties, enums or namespaces. The Windows tier would find one too, but only
 * after the release is built; this says which file and line at once.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/deps.ts';

// node:module has stripTypeScriptTypes from Node 22.13 on; on Node 20 the check cannot run.
const strip = (nodeModule as { stripTypeScriptTypes?: (code: string) => string }).stripTypeScriptTypes;

const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'fixtures'
        ? []
        : walk(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')
        ? [join(dir, e.name)]
        : [],
  );

describe('type stripping', () => {
  it('every .ts file of src/, test/ and perf/ is erasable syntax only', (t) => {
    if (!strip) return t.skip(`node ${process.version} has no stripTypeScriptTypes`);
    const files = ['src', 'test', 'perf'].flatMap((d) => walk(join(repoRoot, d)));
    assert.ok(files.length > 200, `only ${files.length} files found`);
    const refused = files.flatMap((f) => {
      try {
        strip(readFileSync(f, 'utf8'));
        return [];
      } catch (e) {
        return [`${relative(repoRoot, f)}: ${String((e as Error).message).split('\n')[0]}`];
      }
    });
    assert.deepEqual(refused, []);
    // The check is real: a parameter property is refused.
    assert.throws(() => strip('class A { constructor(readonly x: number) {} }'));
  });
});
