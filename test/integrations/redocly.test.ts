/**
 * The committed OpenAPI document under Redocly CLI's recommended rules (`redocly lint`, offline,
 * telemetry off): no error and no warning. The one rule set aside for one place is in
 * .redocly.lint-ignore.yaml with its reason, and nothing else may be.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { repoRoot } from '../support/deps.ts';
import { run } from './tools.ts';

const cli = join(repoRoot, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

describe('openapi/openapi.json under redocly lint', () => {
  it('has no error and no warning', async () => {
    const r = await run(process.execPath, [cli, 'lint', '--format=json', 'openapi/openapi.json'], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      },
      timeoutMs: 120_000,
    });
    const report = JSON.parse(r.stdout) as {
      totals: { errors: number; warnings: number; ignored: number };
      problems: { ruleId: string; message: string }[];
    };
    assert.deepEqual(
      report.problems.map((p) => `${p.ruleId}: ${p.message}`),
      [],
    );
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 1 });
    assert.equal(r.code, 0, r.stderr);
    const ignored = parse(await readFile(join(repoRoot, '.redocly.lint-ignore.yaml'), 'utf8'));
    assert.deepEqual(ignored, {
      'openapi/openapi.json': { 'operation-4xx-response': ['#/paths/~1healthz/get/responses'] },
    });
  });
});
