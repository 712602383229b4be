/**
 * Child processes for the benchmark scripts: a server started and awaited on its "listening on
 * <url>" line, its resident memory, and autocannon run as its own process (the load generator must
 * not share the event loop, or the CPU accounting, of the script or the server).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { minimalEnv, repoRoot, type Serving, startServing } from '../../scripts/lib/serve.mjs';

export { repoRoot };
export const tsxCli = join(repoRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const autocannonCli = join(repoRoot, 'node_modules', 'autocannon', 'autocannon.js');
const execFileP = promisify(execFile);

export type ServerProcess = Serving;

/** Spawns `node <args>` from the repository and resolves once it prints `listening on <url>` (60 s at most). */
export const startProcess = (args: string[], env: Record<string, string> = {}): Promise<ServerProcess> =>
  startServing(process.execPath, args, {
    cwd: repoRoot,
    env: { ...minimalEnv(), ...env },
    timeoutMs: 60_000,
  });

/** Resident set size of a process in MiB (VmRSS in /proc/<pid>/status). */
export const rssMiB = async (pid: number): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
};

/** Peak resident set size of a process in MiB (VmHWM in /proc/<pid>/status). */
export const peakMiB = async (pid: number): Promise<number> => {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
};

export interface LoadResult {
  /** Requests per second, mean over the run. */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

/**
 * autocannon against `url` from its own process: `connections` connections for `seconds`, or
 * exactly `amount` requests when given; a GET unless `post` is given.
 */
export const autocannon = async (
  url: string,
  opts: {
    connections?: number;
    seconds?: number;
    amount?: number;
    /** A POST with this body and these headers instead of a GET. */
    post?: { body: string; headers: Record<string, string> };
    /** Seconds before autocannon counts a request as an error (its default: 10). */
    timeout?: number;
  } = {},
): Promise<LoadResult> => {
  const args = [autocannonCli, '--json', '-c', String(opts.connections ?? 50)];
  if (opts.amount !== undefined) args.push('-a', String(opts.amount));
  else args.push('-d', String(opts.seconds ?? 5));
  if (opts.timeout !== undefined) args.push('-t', String(opts.timeout));
  if (opts.post) {
    args.push('-m', 'POST', '-b', opts.post.body);
    for (const [k, v] of Object.entries(opts.post.headers)) args.push('-H', `${k}=${v}`);
  }
  const { stdout } = await execFileP(process.execPath, [...args, url], { maxBuffer: 64 * 1024 * 1024 });
  const r = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
  };
};

/**
 * CPU time (user + system) a process has used so far, in milliseconds (/proc/<pid>/stat); with
 * `reaped`, that of its children it has waited for too (cutime, cstime).
 */
export const cpuMs = async (pid: number | 'self', { reaped = false } = {}): Promise<number> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at state, field 3.
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  const ticks = f[11]! + f[12]! + (reaped ? f[13]! + f[14]! : 0);
  return (ticks * 1000) / CLOCK_TICKS;
};

/** `cpuMs`, or 0 for no process or one that is gone. */
export const cpuMsOrZero = (
  pid: number | 'self' | undefined,
  options?: { reaped?: boolean },
): Promise<number> => (pid === undefined ? Promise.resolve(0) : cpuMs(pid, options).catch(() => 0));

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;

/**
 * A command line run on `cpu` alone when given: `taskset -c <cpu>` execs the command in its own
 * process, so the pid and signals stay the command's.
 */
export const onCpu = (argv: readonly string[], cpu?: number): string[] =>
  cpu === undefined ? [...argv] : ['taskset', '-c', String(cpu), ...argv];
