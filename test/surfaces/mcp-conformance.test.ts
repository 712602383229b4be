import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../support/deps.ts';

/** Runs scripts/mcp-conformance.mjs (the npm script test:mcp-conformance) and collects its output. */
const runConformance = (): Promise<{ code: number | null; out: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'mcp-conformance.mjs')], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });

describe('MCP conformance suite (offline, against powerplan serve)', () => {
  it('passes the scenarios that apply; the others fail exactly as listed in the baseline', {
    timeout: 300_000,
  }, async () => {
    const { code, out } = await runConformance();
    assert.equal(code, 0, out.slice(-4000));
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'prompts-list']) {
      assert.match(out, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), scenario);
    }
    assert.match(out, /✓ dns-rebinding-protection: 2 passed, 0 failed/);
    assert.match(out, /Baseline check passed/);
  });
});
