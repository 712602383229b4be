/**
 * Client generation: types generated with openapi-typescript from the committed OpenAPI document,
 * and the example portal client (integrations/typescript/powerplan-client.ts) compiled against
 * them with the TypeScript compiler. A document that breaks the types (here: a renamed response
 * field) must make the compilation fail, or the check proves nothing.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { repoRoot } from '../support/deps.ts';

const clientSource = join(repoRoot, 'integrations', 'typescript', 'powerplan-client.ts');

/** Generates the types into `dir`, copies the client next to them and returns the compiler's errors. */
const compileAgainst = async (dir: string, document: object): Promise<string[]> => {
  await writeFile(join(dir, 'powerplan-api.ts'), astToString(await openapiTS(document as never)));
  await copyFile(clientSource, join(dir, 'powerplan-client.ts'));
  // A portal's package is an ES module, as is this repository.
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  const program = ts.createProgram([join(dir, 'powerplan-client.ts')], {
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
};

describe('typed client generated from openapi/openapi.json', () => {
  let dir: string;
  let document: {
    components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-client-'));
    document = JSON.parse(await readFile(join(repoRoot, 'openapi', 'openapi.json'), 'utf8'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('generates types that the example client compiles against', async () => {
    const errors = await compileAgainst(dir, document);
    assert.deepEqual(errors, []);
    const generated = await readFile(join(dir, 'powerplan-api.ts'), 'utf8');
    assert.match(generated, /"\/v1\/plans\/active": \{/);
    assert.match(generated, /SetPlanResult: \{/);
  });

  it('fails to compile when the document breaks the contract the client uses', async () => {
    const broken = structuredClone(document);
    const result = broken.components.schemas.SetPlanResult;
    assert.ok(result?.properties.changed, 'SetPlanResult.changed is in the document');
    result.properties.hasChanged = result.properties.changed;
    delete result.properties.changed;
    result.required = result.required.map((r) => (r === 'changed' ? 'hasChanged' : r));
    const errors = await compileAgainst(dir, broken);
    assert.ok(
      errors.some((e) => /changed/.test(e)),
      `expected an error about 'changed', got: ${errors.join('\n') || 'none'}`,
    );
  });
});
