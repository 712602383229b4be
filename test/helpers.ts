/**
 * Test helpers: fresh dependencies over a temporary state directory, the CLI as a child process,
 * and a real `powerplan serve` on a free loopback port.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { buildDeps, type Deps } from '../src/deps.ts';

export const repoRoot = resolve(import.meta.dirname, '..');
export const binPath = join(repoRoot, 'bin', 'powerplan.js');

export interface TestDeps {
  deps: Deps;
  dir: string;
  env: Record<string, string>;
  cleanup: () => Promise<void>;
}

/** Deps on the simulated backend over a new state directory; `env` reproduces them for a child process. */
export const testDeps = async (
  extraEnv: Record<string, string> = {},
  overrides: Partial<Deps> = {},
): Promise<TestDeps> => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-test-'));
  const env = {
    POWERPLAN_STATE_DIR: dir,
    POWERPLAN_BACKEND: 'simulated',
    POWERPLAN_LOG_LEVEL: 'silent',
    ...extraEnv,
  };
  const deps = buildDeps(loadConfig(env), overrides);
  return {
    deps,
    dir,
    env,
    cleanup: async () => {
      deps.shutdown.abort();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `powerplan <args>` as a child process, the way a user or Ansible does. */
export const runCli = (
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<CliResult> =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [binPath, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** Starts `powerplan serve` on a free port and resolves once it listens. */
export const startServer = (env: Record<string, string>, extraArgs: string[] = []): Promise<ServerProcess> =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [binPath, 'serve', ...extraArgs], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', POWERPLAN_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}${err}`)), 20_000);
    child.stderr!.on('data', (d) => {
      err += d;
    });
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolvePromise({
          url: m[1]!,
          child,
          stop: (signal = 'SIGTERM') => {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}${err}`));
    });
  });

/**
 * A self-signed certificate for localhost and 127.0.0.1 (one day), made with openssl in `dir`;
 * throws when openssl is missing.
 */
export const makeTestCertificate = (dir: string): { cert: string; key: string } => {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
};
