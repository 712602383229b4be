/**
 * `npm test` on a machine the README's quick start serves but without an external tool: the test
 * of that tool skips with its reason outside CI and fails in CI. Shown on the PowerShell test, run
 * as its own `node --test` process with a PowerShell that has no Pester 5 (a fresh home, so no
 * user module folder) and with no PowerShell at all.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/deps.ts';
import { findPwsh, pwshInstall, requireTool, run, toolRuns } from './tools.ts';

describe('a missing external tool: skipped with its reason outside CI, a failure in CI', () => {
  let home = '';
  const pwsh = findPwsh();
  const hasPwsh = toolRuns(pwsh, ['-NoProfile', '-NonInteractive', '-Command', 'exit 0']);

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'powerplan-no-tools-'));
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  /** The PowerShell test file alone, as `npm test` runs it, with this environment. */
  const powershellTest = (env: Record<string, string>) => {
    // NODE_TEST_CONTEXT would make the inner runner report to this one instead of printing TAP.
    const {
      CI: _ci,
      POWERPLAN_PWSH: _p,
      PSModulePath: _m,
      XDG_DATA_HOME: _x,
      NODE_TEST_CONTEXT: _n,
      ...rest
    } = process.env;
    return run(
      process.execPath,
      [
        '--import',
        'tsx',
        '--test',
        '--test-reporter=tap',
        join('test', 'integrations', 'powershell.test.ts'),
      ],
      { cwd: repoRoot, env: { ...rest, HOME: home, ...env }, timeoutMs: 120_000 },
    );
  };

  it('PowerShell without Pester 5 outside CI: skipped, saying so and how to install it', async (t) => {
    if (!requireTool(t, hasPwsh, `PowerShell (${pwsh})`, pwshInstall)) return;
    const r = await powershellTest({ POWERPLAN_PWSH: pwsh });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /# SKIP Pester 5 is not installed here; install it with: dotnet tool install/);
    assert.match(r.stdout, /^# pass 0$/m);
    assert.match(r.stdout, /^# fail 0$/m);
    assert.match(r.stdout, /^# skipped 1$/m);
  });

  it('PowerShell without Pester 5 in CI: a failure naming it', async (t) => {
    if (!requireTool(t, hasPwsh, `PowerShell (${pwsh})`, pwshInstall)) return;
    const r = await powershellTest({ POWERPLAN_PWSH: pwsh, CI: 'true' });
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stdout, /Pester 5 is missing in CI; \.ci\/run should have installed it/);
    assert.match(r.stdout, /^# fail 1$/m);
  });

  it('no PowerShell at all: skipped outside CI, a failure in CI', async () => {
    const missing = join(home, 'no-such-pwsh');
    const skipped = await powershellTest({ POWERPLAN_PWSH: missing });
    assert.equal(skipped.code, 0, skipped.stdout + skipped.stderr);
    assert.match(skipped.stdout, /# SKIP PowerShell \(.*no-such-pwsh\) is not installed here/);
    const failed = await powershellTest({ POWERPLAN_PWSH: missing, CI: 'true' });
    assert.notEqual(failed.code, 0, failed.stdout);
    assert.match(failed.stdout, /PowerShell \(.*no-such-pwsh\) is missing in CI/);
  });
});
