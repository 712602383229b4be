/** The CLI as a child process, and a real `powerplan serve` on a free loopback port. */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { childBaseEnv } from './commands.ts';
import { repoRoot } from './deps.ts';

/**
 * The `powerplan` command. On Windows the bundle itself (built by the Windows tier before it
 * starts): bin/powerplan.js would fall back to tsx for a source changed since, and tsx cannot run
 * there (its esbuild is the Linux build).
 */
export const binPath =
  process.platform === 'win32'
    ? join(repoRoot, 'dist', 'powerplan.mjs')
    : join(repoRoot, 'bin', 'powerplan.js');

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
      env: { ...childBaseEnv(), ...env },
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
      env: { ...childBaseEnv(), POWERPLAN_PORT: '0', ...env },
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
