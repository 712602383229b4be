import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { operations } from '../../src/operations/index.ts';
import { buildOpenApiDocument } from '../../src/surfaces/http/openapi.ts';
import { repoRoot } from '../support/deps.ts';

const committedPath = join(repoRoot, 'openapi', 'openapi.json');

describe('OpenAPI document', () => {
  it('the committed openapi/openapi.json matches what the code generates (run `npm run openapi:write`)', async () => {
    const committed = JSON.parse(await readFile(committedPath, 'utf8'));
    assert.deepEqual(committed, JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await validate(structuredClone(buildOpenApiDocument()) as never);
    assert.equal(result.valid, true, JSON.stringify((result as { errors?: unknown }).errors ?? result));
  });

  it('every component schema is a valid JSON Schema 2020-12', () => {
    const doc = buildOpenApiDocument() as { components: { schemas: Record<string, object> } };
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      assert.equal(ajv.validateSchema(schema), true, `${name}: ${ajv.errorsText(ajv.errors)}`);
    }
  });

  it('documents every operation once, with its scope and problem responses', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    for (const op of operations) {
      const entry = doc.paths[op.http.path]?.[op.http.method.toLowerCase()];
      assert.ok(entry, `${op.name} is documented at ${op.http.method} ${op.http.path}`);
      assert.equal(entry.operationId, op.name);
      assert.equal(entry['x-required-scope'], op.scope);
      const responses = entry.responses as Record<string, { content: Record<string, unknown> }>;
      assert.ok(
        responses['400']?.content['application/problem+json'],
        `${op.name} documents 400 as problem+json`,
      );
    }
  });
});
