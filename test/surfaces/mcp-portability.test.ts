/**
 * The tool schemas pass the MCP Inspector's schema portability check (`--strict`: type unions
 * such as nullable fields written as `"type": ["string", "null"]`, schemas that constrain nothing,
 * bare boolean schemas, remote references) with no finding at all, run as a user would: the
 * Inspector's CLI against `powerplan mcp` over stdio.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { binPath, runProcess } from '../../scripts/lib/serve.mjs';
import { operations } from '../../src/operations/index.ts';
import { writeSecret } from '../fleet/rig.ts';

const inspectorCli = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/package.json')),
  'clients',
  'cli',
  'build',
  'index.js',
);

describe('MCP tool schemas are portable', () => {
  it('the Inspector --strict check finds no error and no warning', async () => {
    const home = await mkdtemp(join(tmpdir(), 'powerplan-inspector-'));
    try {
      // With a fleet, so that every tool is listed (the fleet tools only are with one).
      const fleet = join(home, 'fleet.json');
      await writeSecret(fleet, JSON.stringify({ hosts: [{ name: 'db1', url: 'http://127.0.0.1:9' }] }));
      const args = [
        inspectorCli,
        ...['-e', 'POWERPLAN_BACKEND=simulated', '-e', `POWERPLAN_STATE_DIR=${join(home, 'state')}`],
        ...['-e', `POWERPLAN_FLEET_FILE=${fleet}`],
        ...['-e', 'POWERPLAN_LOG_LEVEL=silent', '--method', 'tools/list', '--strict'],
        process.execPath,
        binPath,
        'mcp',
      ];
      // HOME: the Inspector keeps a catalog there; a fresh one per run touches nothing of the user's.
      const { code, stdout, stderr } = await runProcess(process.execPath, args, {
        env: { PATH: process.env.PATH ?? '', HOME: home },
        timeoutMs: 120_000,
      });
      assert.equal(code, 0, stderr);
      const { tools } = JSON.parse(stdout) as { tools: { name: string }[] };
      assert.deepEqual(tools.map((t) => t.name).sort(), operations.map((o) => o.name).sort());
      // With --strict the Inspector prints every finding (and a count) on stderr; a clean run prints none.
      assert.doesNotMatch(stderr, /Warning|Error|warnings? across/, stderr);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
