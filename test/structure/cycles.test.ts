/**
 * Imports point downwards: no import cycle anywhere in src/, type-only and dynamic imports
 * included (a type cycle is still two modules that cannot be understood apart).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import madge from 'madge';
import { repoRoot } from '../support/deps.ts';

describe('module structure', () => {
  it('has no import cycle in src/ (madge, type-only and dynamic imports counted)', async () => {
    const detective = { skipTypeImports: false, skipAsyncImports: false };
    const result = await madge(join(repoRoot, 'src'), {
      fileExtensions: ['ts'],
      tsConfig: join(repoRoot, 'tsconfig.json'),
      detectiveOptions: { ts: detective, tsx: detective, es6: detective },
    });
    const graph = result.obj();
    // The graph is real: a static, a type-only and a dynamic import are all seen.
    assert.ok(Object.keys(graph).length > 90, `only ${Object.keys(graph).length} modules found`);
    assert.ok(graph['surfaces/http/app.ts']?.includes('surfaces/http/guard.ts'), 'static import');
    assert.ok(graph['surfaces/http/guard.ts']?.includes('surfaces/http/public-routes.ts'), 'type import');
    assert.ok(graph['surfaces/cli/registry.ts']?.includes('surfaces/mcp/stdio.ts'), 'dynamic import');
    assert.deepEqual(result.circular(), []);
  });
});
