import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/deps.ts';

/** Value imports (`import type` is erased) and re-exports at the top level of a module. */
const staticSpecifiers = (source: string): string[] =>
  [...source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)].map(
    (m) => m[1]!,
  );

/** Every module reachable from `entry` through static imports, and the packages they import. */
const staticGraph = async (entry: string) => {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const visit = async (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const spec of staticSpecifiers(await readFile(file, 'utf8'))) {
      if (spec.startsWith('.')) await visit(resolve(dirname(file), spec));
      else if (!packages.has(spec)) packages.set(spec, relative(repoRoot, file));
    }
  };
  await visit(entry);
  return { files, packages };
};

describe('the MCP SDK is loaded only when MCP is used', () => {
  it('nothing reachable statically from the CLI entry point imports the SDK or the MCP module', async () => {
    const { files, packages } = await staticGraph(join(repoRoot, 'src', 'main.ts'));
    assert.ok(files.has(join(repoRoot, 'src', 'surfaces', 'cli', 'cli.ts')), 'the walk follows imports');
    const sdk = [...packages].filter(([spec]) => spec.startsWith('@modelcontextprotocol/'));
    assert.deepEqual(sdk, [], 'static SDK imports (package, importing file)');
    assert.equal(files.has(join(repoRoot, 'src', 'surfaces', 'mcp', 'server.ts')), false);
  });

  it('the walk does see the SDK where it is imported', async () => {
    const { packages } = await staticGraph(join(repoRoot, 'src', 'surfaces', 'mcp', 'server.ts'));
    assert.ok(packages.has('@modelcontextprotocol/sdk/server/index.js'));
  });

  it('the HTTP app reaches the MCP handler module, which itself stays SDK-free', async () => {
    const { files, packages } = await staticGraph(join(repoRoot, 'src', 'surfaces', 'http', 'server.ts'));
    assert.ok(files.has(join(repoRoot, 'src', 'surfaces', 'mcp', 'http.ts')));
    assert.equal(
      [...packages.keys()].some((p) => p.startsWith('@modelcontextprotocol/')),
      false,
    );
  });
});
