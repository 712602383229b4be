/**
 * `powerplan service install|uninstall`: the wrapper's config it writes, and the refusal where it
 * does not apply. The install and uninstall themselves run as Windows processes from the release
 * (test/windows-process/release.scenario.ts, npm run test:windows).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configureServiceXml } from '../../src/surfaces/cli/service-commands.ts';
import { repoRoot, testDeps } from '../support/deps.ts';
import { runCli } from '../support/processes.ts';

const template = readFileSync(join(repoRoot, 'deploy/windows/powerplan-service.xml'), 'utf8');
const envOf = (xml: string) =>
  Object.fromEntries([...xml.matchAll(/<env name="([^"]+)" value="([^"]*)" \/>/g)].map((m) => [m[1], m[2]]));

describe('powerplan service', () => {
  it('with a token file the service listens on all addresses; without one on loopback only', () => {
    const open = configureServiceXml(template, {
      tokenFile: 'C:\\ProgramData\\powerplan\\tokens & "keys".json',
      stateDir: 'C:\\ProgramData\\powerplan',
    });
    assert.deepEqual(envOf(open), {
      ...envOf(template),
      POWERPLAN_HOST: '0.0.0.0',
      POWERPLAN_STATE_DIR: 'C:\\ProgramData\\powerplan',
      POWERPLAN_TOKEN_FILE: 'C:\\ProgramData\\powerplan\\tokens &amp; &quot;keys&quot;.json',
    });
    const local = configureServiceXml(template, { tokenFile: undefined, stateDir: 'D:\\state' });
    assert.equal(envOf(local).POWERPLAN_HOST, '127.0.0.1');
    assert.equal(envOf(local).POWERPLAN_TOKEN_FILE, undefined);
    // Everything else of the shipped file stays: executable, arguments, recovery, logs.
    for (const line of template.split(/\r?\n/).filter((l) => !l.includes('<env '))) {
      assert.ok(local.split('\r\n').includes(line), line);
    }
    // Configuring twice gives the same file.
    assert.equal(configureServiceXml(local, { tokenFile: undefined, stateDir: 'D:\\state' }), local);
  });

  it('outside Windows it refuses with exit code 1 and points at the .deb', async () => {
    const t = await testDeps();
    try {
      const r = await runCli(['service', 'install'], t.env);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /systemctl enable --now powerplan/);
    } finally {
      await t.cleanup();
    }
  });
});
