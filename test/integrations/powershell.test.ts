/**
 * The PowerShell module (integrations/powershell) run for real: Pester 5 tests
 * (test/integrations/powershell/PowerPlan.Tests.ps1) under PowerShell against three live services
 * on the simulated backend, each with its own state directory: plain http, a token file, and TLS
 * with a certificate made here with openssl and trusted the way an operator would (Windows: the
 * machine's Trusted Root store; elsewhere: the CA bundle that .NET reads, SSL_CERT_FILE).
 *
 * The PowerShell is POWERPLAN_PWSH (e.g. powershell.exe for Windows PowerShell 5.1), else pwsh on
 * the PATH or in ~/.dotnet/tools. Without one, without Pester 5 or without openssl the test skips
 * outside CI, saying what is missing and how to install it, and fails in CI, where .ci/run installs them.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/lib/tokens.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { type ServerProcess, startServer } from '../support/processes.ts';
import { makeTestCertificate } from '../support/tls.ts';
import { findPwsh, opensslInstall, pwshInstall, requireTool, run, toolRuns } from './tools.ts';

const install = pwshInstall;

describe('PowerShell module PowerPlan (Pester, live services)', () => {
  const pwsh = findPwsh();
  const windows = process.platform === 'win32';
  let available = false;
  let dir = '';
  const services: { deps: TestDeps; server: ServerProcess }[] = [];
  const env: Record<string, string> = {};
  let trusted: string | undefined;

  /** Starts a service; answers its port and state directory (where its control socket is). */
  const serve = async (extra: (dir: string) => Promise<Record<string, string>>) => {
    const deps = await testDeps();
    const server = await startServer({ ...deps.env, ...(await extra(deps.dir)) });
    services.push({ deps, server });
    return { port: String(new URL(server.url).port), stateDir: deps.dir };
  };

  let pester = '';
  let openssl = false;

  before(async () => {
    // One probe: PowerShell's version and the newest Pester 5 it can load (empty: none).
    const probe = await run(
      pwsh,
      [
        '-NoProfile',
        '-NonInteractive',
        '-Command',
        "$p = Get-Module -ListAvailable Pester | Where-Object { $_.Version.Major -eq 5 } | Sort-Object Version -Descending | Select-Object -First 1; 'pester=' + $(if ($p) { $p.Version })",
      ],
      { timeoutMs: 60_000 },
    );
    available = probe.code === 0;
    pester = /^pester=(\S*)/m.exec(probe.stdout)?.[1] ?? '';
    openssl = toolRuns('openssl', ['version']);
    if (!available || !pester || !openssl) return;
    dir = await mkdtemp(join(tmpdir(), 'powerplan-pwsh-'));
    const { cert, key } = makeTestCertificate(dir);
    if (windows) {
      // What an operator does: the certificate into the machine's Trusted Root store (removed in after()).
      trusted = execFileSync(
        'powershell.exe',
        [
          '-NoProfile',
          '-Command',
          `(Import-Certificate -FilePath '${cert}' -CertStoreLocation Cert:\\LocalMachine\\Root).Thumbprint`,
        ],
        { encoding: 'utf8' },
      ).trim();
    } else {
      env.SSL_CERT_FILE = cert;
    }
    const plain = await serve(async () => ({}));
    env.POWERPLAN_TEST_PORT = plain.port;
    // As root, with no token configured, the module finds this service's control socket.
    env.POWERPLAN_STATE_DIR = plain.stateDir;
    env.POWERPLAN_TEST_TOKEN_PORT = (
      await serve(async (d) => {
        const file = join(d, 'tokens.json');
        env.POWERPLAN_TEST_TOKEN = (await createToken(file, 'pester', ['control'])).token;
        env.POWERPLAN_TEST_READ_TOKEN = (await createToken(file, 'pester-read', ['read'])).token;
        return { POWERPLAN_TOKEN_FILE: file };
      })
    ).port;
    const tls = await serve(async () => ({ POWERPLAN_TLS_CERT: cert, POWERPLAN_TLS_KEY: key }));
    env.POWERPLAN_TEST_TLS_PORT = tls.port;
    env.POWERPLAN_TEST_TLS_STATE_DIR = tls.stateDir;
  });

  after(async () => {
    for (const s of services) {
      await s.server.stop();
      await s.deps.cleanup();
    }
    if (trusted) {
      execFileSync('powershell.exe', [
        '-NoProfile',
        '-Command',
        `Remove-Item Cert:\\LocalMachine\\Root\\${trusted}`,
      ]);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('passes every Pester test of the module', async (t) => {
    if (!requireTool(t, available, `PowerShell (${pwsh})`, install)) return;
    if (!requireTool(t, pester !== '', 'Pester 5', install)) return;
    if (!requireTool(t, openssl, 'openssl', opensslInstall)) return;
    const summaryPath = join(dir, 'summary.json');
    const r = await run(
      pwsh,
      [
        '-NoProfile',
        '-NonInteractive',
        '-ExecutionPolicy',
        'Bypass',
        '-File',
        join(import.meta.dirname, 'powershell', 'Invoke-Tests.ps1'),
        summaryPath,
      ],
      { env: { ...process.env, ...env, POWERPLAN_TEST_PWSH: pwsh, NO_COLOR: '1' }, timeoutMs: 420_000 },
    );
    const output = `${r.stdout}\n${r.stderr}`;
    const summary = JSON.parse(await readFile(summaryPath, 'utf8').catch(() => '{}')) as {
      result?: string;
      total?: number;
      passed?: number;
      failed?: number;
      skipped?: number;
      pester?: string;
      powershell?: string;
      failedTests?: string[];
      failedBlocks?: string[];
    };
    t.diagnostic(
      `PowerShell ${summary.powershell}, Pester ${summary.pester}: ${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped`,
    );
    assert.equal(summary.result, 'Passed', output);
    assert.equal(r.code, 0, output);
    assert.deepEqual([...(summary.failedTests ?? []), ...(summary.failedBlocks ?? [])], []);
    assert.ok((summary.passed ?? 0) >= 30, `only ${summary.passed} Pester tests passed:\n${output}`);
  });
});
