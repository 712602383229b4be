#!/usr/bin/env node
// Runs the MCP conformance suite (server scenarios, @modelcontextprotocol/conformance 0.1.13)
// against a fresh `powerplan serve` on the simulated backend, loopback, random port. Offline: the
// suite only talks to that URL. Scenarios that do not apply are the expected failures in
// test/surfaces/mcp-conformance-baseline.yml; the exit code is the suite's (0: as expected).
// Usage: npm run test:mcp-conformance [-- --scenario <name>]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { minimalEnv, repoRoot as root, startServing } from './lib/serve.mjs';

const stateDir = mkdtempSync(join(tmpdir(), 'powerplan-conformance-'));
const server = await startServing(process.execPath, [join(root, 'bin', 'powerplan.js'), 'serve'], {
  env: {
    ...minimalEnv(),
    POWERPLAN_STATE_DIR: stateDir,
    POWERPLAN_BACKEND: 'simulated',
    POWERPLAN_HOST: '127.0.0.1',
    POWERPLAN_PORT: '0',
    POWERPLAN_LOG_LEVEL: 'warn',
  },
});
const { url } = server;

let status = 1;
try {
  const result = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
      'server',
      '--url',
      `${url}/mcp`,
      '--expected-failures',
      join(root, 'test', 'surfaces', 'mcp-conformance-baseline.yml'),
      '--output-dir',
      join(stateDir, 'results'),
      ...process.argv.slice(2),
    ],
    { stdio: 'inherit', cwd: stateDir, timeout: 300_000 },
  );
  status = result.status ?? 1;
} finally {
  await server.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exit(status);
