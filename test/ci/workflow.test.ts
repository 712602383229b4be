/**
 * The GitHub Actions workflow (.github/workflows/ci.yml) cannot run on the project's own machines:
 * it is validated here by GitHub's own workflow parser (@actions/workflow-parser, its schema ships
 * in the package: offline), and checked to do what the project says CI does: .ci/run on
 * every supported Node.js version, the Windows unit tests, the powercfg smoke test, and the
 * PowerShell module's tests under Windows PowerShell 5.1 and PowerShell 7.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NoOperationTraceWriter, parseWorkflow } from '@actions/workflow-parser';
import { parse } from 'yaml';
import { repoRoot } from '../support/deps.ts';

const path = join(repoRoot, '.github', 'workflows', 'ci.yml');
const text = readFileSync(path, 'utf8');

interface Step {
  run?: string;
  uses?: string;
  shell?: string;
  env?: Record<string, string>;
}
interface Job {
  'runs-on': string;
  if?: string;
  needs?: string[];
  strategy?: { matrix: { node: string[] } };
  container?: { image: string; options?: string };
  steps: Step[];
}
const workflow = parse(text) as { on: { push: { tags?: string[] } }; jobs: Record<string, Job> };
/** The parser's complaints about a workflow text; none for a valid workflow. */
const workflowErrors = (content: string): string[] =>
  parseWorkflow({ name: 'ci.yml', content }, new NoOperationTraceWriter())
    .context.errors.getErrors()
    .map((e) => e.message);
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } };

describe('.github/workflows/ci.yml', () => {
  it("validates with GitHub's workflow parser", () => {
    assert.deepEqual(workflowErrors(text), []);
  });

  it('the validator rejects a broken workflow (it is not a no-op)', () => {
    const broken = text.replace('runs-on: windows-latest', 'runs_on: windows-latest');
    assert.notEqual(broken, text);
    assert.ok(workflowErrors(broken).some((m) => /runs_on/.test(m)));
    assert.ok(workflowErrors(broken).some((m) => /Required property is missing: runs-on/.test(m)));
    assert.ok(workflowErrors('name: x\non: push\njobs: 3\n').length > 0);
  });

  it('runs .ci/run on Linux as root in Debian 12; .ci/run runs the suite on Node 22 and 24, the range package.json declares', async () => {
    const linux = workflow.jobs.linux!;
    assert.equal(linux.strategy, undefined, 'one job: .ci/run itself covers each supported version');
    assert.equal(linux.container?.image, 'node:22-bookworm');
    assert.match(linux.container?.options ?? '', /--privileged/);
    assert.ok(linux.steps.some((s) => /bash \.ci\/run/.test(s.run ?? '')));
    assert.equal(pkg.engines.node, '^22.19.0 || >=24.0.0');
    const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    // The README's commands on the pinned Node 22, the suite again on the pinned Node 24.
    assert.match(ci, /export PATH="\$\(pinned_node_bin nodeLinux22\):\$PATH"[\s\S]*npm ci[\s\S]*npm test/);
    assert.match(
      ci,
      /node24_bin="\$\(pinned_node_bin nodeLinux24\)"[\s\S]*PATH="\$node24_bin:\$PATH" npm test/,
    );
    const { PINNED } = await import('../../scripts/windows/toolchain.mjs');
    assert.match(PINNED.nodeLinux22?.spec ?? '', /@22\./);
    assert.match(PINNED.nodeLinux24?.spec ?? '', /@24\./);
    for (const p of [PINNED.nodeLinux22, PINNED.nodeLinux24]) assert.match(p?.sha256 ?? '', /^[0-9a-f]{64}$/);
  });

  it('on windows-latest: unit tests, the powercfg smoke test and the module tests under 5.1 and 7', () => {
    const windows = workflow.jobs.windows!;
    assert.equal(windows['runs-on'], 'windows-latest');
    const runs = (shell: string, pattern: RegExp) =>
      windows.steps.some((s) => s.shell === shell && pattern.test(s.run ?? ''));
    assert.ok(windows.steps.some((s) => /^npm run test:windows -- unit/.test(s.run ?? '')));
    for (const shell of ['powershell', 'pwsh']) {
      assert.ok(runs(shell, /powercfg-smoke\.ps1/), `smoke test under ${shell}`);
      assert.ok(runs(shell, /npm test -- test\/integrations\/powershell/), `module tests under ${shell}`);
      assert.ok(runs(shell, /POWERPLAN_PWSH/), `module tests run by ${shell} itself`);
    }
    assert.ok(existsSync(join(repoRoot, '.github', 'scripts', 'powercfg-smoke.ps1')));
    const smoke = readFileSync(join(repoRoot, '.github', 'scripts', 'powercfg-smoke.ps1'), 'utf8');
    assert.match(smoke, /8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c/);
    assert.match(smoke, /finally \{\s*powercfg \/setactive \$original/);
  });

  it('.ci/run leaves the daemons it installs disabled at boot, whether or not systemd runs', () => {
    const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8');
    const daemons = /^daemons=\(([^)]*)\)$/m.exec(ci)?.[1]?.split(' ') ?? [];
    assert.deepEqual(daemons.sort(), [
      'postgresql.service',
      'power-profiles-daemon.service',
      'prometheus-node-exporter.service',
      'prometheus.service',
      'tuned.service',
    ]);
    // Offline (no running systemd needed), then the links themselves are checked.
    const loop = ci.slice(ci.indexOf('for unit in '));
    assert.match(loop, /^ {4}\$sudo systemctl --root=\/ disable "\$unit"/m);
    assert.match(loop, /still enabled at boot/);
    assert.doesNotMatch(ci, /systemctl disable --now/);
  });

  it('on a tag: the zip built and installed as a service on windows-latest, the .deb built and installed, both published', () => {
    assert.deepEqual(workflow.on.push.tags, ['v*']);
    const win = workflow.jobs['release-windows']!;
    assert.equal(win['runs-on'], 'windows-latest');
    const script = win.steps.map((s) => s.run ?? '').join('\n');
    for (const pattern of [
      /npm run package:windows/,
      /powerplan\.exe" --version/,
      /powerplan\.exe" active/,
      /install\.ps1/,
      /Get-Service powerplan/,
      /service uninstall/,
    ]) {
      assert.match(script, pattern);
    }
    const deb = workflow.jobs['release-deb']!;
    assert.match(deb.container?.image ?? '', /bookworm/);
    const debScript = deb.steps.map((s) => s.run ?? '').join('\n');
    assert.match(debScript, /npm run package:deb/);
    assert.match(debScript, /npm run test:deb/);
    const publish = workflow.jobs.publish!;
    assert.match(publish.if ?? '', /refs\/tags\/v/);
    assert.deepEqual([...(publish.needs ?? [])].sort(), [
      'linux',
      'release-deb',
      'release-windows',
      'windows',
    ]);
  });
});
