import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { minimalEnv, repoRoot, runProcess } from '../../scripts/lib/serve.mjs';

/** Runs scripts/mcp-conformance.mjs (the npm script test:mcp-conformance) and collects its output. */
const runConformance = async (): Promise<{ code: number | null; out: string }> => {
  const r = await runProcess(process.execPath, [join(repoRoot, 'scripts', 'mcp-conformance.mjs')], {
    env: { ...minimalEnv(), NO_COLOR: '1' },
  });
  return { code: r.code, out: r.stdout + r.stderr };
};

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
