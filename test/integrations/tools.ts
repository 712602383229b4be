/**
 * External tools the integration tests drive (ansible-playbook, Python's prometheus_client). On a
 * developer machine a missing tool skips the test with a message saying how to install it; in CI
 * (CI=true), where .ci/run installs them, a missing tool fails the test instead of hiding it.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { repoRoot } from '../support/deps.ts';

export const inCi = process.env.CI === 'true';

/** Runs a program and resolves with its exit code and output; a missing program gives code null. */
export const run = (
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        env: options.env ?? process.env,
        cwd: options.cwd,
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });

/** True when `file` runs and exits 0 with `args`: a quick probe for a test's external tool. */
export const toolRuns = (file: string, args: string[] = ['--version']): boolean =>
  spawnSync(file, args, { stdio: 'ignore', timeout: 60_000 }).status === 0;

export const opensslInstall = 'apt-get install openssl';

export const pwshInstall =
  'dotnet tool install --global PowerShell --version 7.6.9, and Pester 5 from NuGet (see .ci/run)';

/** POWERPLAN_PWSH, else the .NET global tool's pwsh (where .ci/run installs it), else pwsh on the PATH. */
export const findPwsh = (): string => {
  if (process.env.POWERPLAN_PWSH) return process.env.POWERPLAN_PWSH;
  const tool = join(homedir(), '.dotnet', 'tools', process.platform === 'win32' ? 'pwsh.exe' : 'pwsh');
  return existsSync(tool) ? tool : 'pwsh';
};

/**
 * Skips (outside CI) or fails (in CI) when a tool is unavailable; returns true when the test may go on.
 * `install` says how to get it, for the skip message and the failure.
 */
export const requireTool = (t: TestContext, available: boolean, what: string, install: string): boolean => {
  if (available) return true;
  if (inCi) throw new Error(`${what} is missing in CI; .ci/run should have installed it (${install}).`);
  t.skip(`${what} is not installed here; install it with: ${install}`);
  return false;
};

/** The first Python that can import prometheus_client (Debian's is in /usr/bin, not in a pyenv). */
export const findPrometheusPython = async (): Promise<string | undefined> => {
  for (const python of ['/usr/bin/python3', 'python3']) {
    const r = await run(python, ['-c', 'import prometheus_client'], { timeoutMs: 20_000 });
    if (r.code === 0) return python;
  }
  return undefined;
};

/** One metric family as Python's prometheus_client parser reads it. */
export interface ParsedFamily {
  name: string;
  type: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

// The parser of the Prometheus client library for Python: a second, independent reading of the format.
const parserScript = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type,
                "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]})
json.dump(out, sys.stdout, allow_nan=True)
`;

/** Parses Prometheus text exposition with prometheus_client; throws with the parser's message on bad input. */
export const parsePrometheusText = async (python: string, text: string): Promise<ParsedFamily[]> => {
  const r = await run(python, ['-c', parserScript], { input: text, timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(`prometheus_client could not parse the exposition: ${r.stderr}`);
  return JSON.parse(r.stdout.replace(/\bNaN\b/g, 'null').replace(/-?Infinity\b/g, 'null')) as ParsedFamily[];
};

export const ansibleDir = join(repoRoot, 'integrations', 'ansible');
export const ansibleInstall = 'apt-get install ansible-core';

/** The environment of every Ansible command: a private home, the collection installed in `dir`. */
export const ansibleEnv = (dir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: join(dir, 'home'),
  LANG: 'C.UTF-8',
  ANSIBLE_CONFIG: join(ansibleDir, 'ansible.cfg'),
  ANSIBLE_COLLECTIONS_PATH: join(dir, 'collections'),
  ANSIBLE_LOCAL_TEMP: join(dir, 'ansible-tmp'),
  // The "remote" (local) side's temporary files too: a user without a home of its own (nobody's is
  // /nonexistent) cannot make ~/.ansible/tmp.
  ANSIBLE_REMOTE_TMP: join(dir, 'ansible-remote-tmp'),
  ANSIBLE_NOCOLOR: '1',
  ANSIBLE_FORCE_COLOR: '0',
  ANSIBLE_STDOUT_CALLBACK: 'default',
});

/** Runs an Ansible command (ansible, ansible-doc, ...) with ansibleEnv(dir) in integrations/ansible. */
export const runAnsible = (dir: string, file: string, args: string[]) =>
  run(file, args, { cwd: ansibleDir, timeoutMs: 180_000, env: ansibleEnv(dir) });

/**
 * What a user does once: builds the collection (ansible-galaxy collection build) and installs the
 * tarball into `dir`/collections; writes `dir`/inventory.ini (given, or one local-connection host).
 */
export const prepareAnsible = async (dir: string, inventory?: string): Promise<void> => {
  await mkdir(join(dir, 'home'), { recursive: true });
  const built = await runAnsible(dir, 'ansible-galaxy', [
    'collection',
    'build',
    ansibleDir,
    '--output-path',
    join(dir, 'build'),
  ]);
  if (built.code !== 0)
    throw new Error(`ansible-galaxy collection build failed:\n${built.stdout}${built.stderr}`);
  const tarball = /Created collection for \S+ at (\S+)/.exec(built.stdout)?.[1];
  if (!tarball) throw new Error(`ansible-galaxy collection build said:\n${built.stdout}`);
  const installed = await runAnsible(dir, 'ansible-galaxy', [
    'collection',
    'install',
    tarball,
    '-p',
    join(dir, 'collections'),
  ]);
  if (installed.code !== 0) {
    throw new Error(`ansible-galaxy collection install failed:\n${installed.stdout}${installed.stderr}`);
  }
  await writeFile(
    join(dir, 'inventory.ini'),
    inventory ??
      '[powerplan]\nlocalhost ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"\n',
  );
};

/** Runs one of the example playbooks against `url` with the repository's ansible.cfg (as a user would in integrations/ansible). */
export const runPlaybook = (dir: string, playbook: string, url: string | undefined, extra: string[] = []) =>
  runAnsible(dir, 'ansible-playbook', [
    '-i',
    join(dir, 'inventory.ini'),
    join(ansibleDir, 'examples', playbook),
    ...(url ? ['-e', `powerplan_url=${url}`] : []),
    ...extra,
  ]);
