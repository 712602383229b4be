/**
 * The one wrapper around external commands (powercfg, tuned-adm, powerprofilesctl, ...).
 * execFile with an argument array (never a shell), a timeout, a maxBuffer, windowsHide and a fresh
 * environment. Output is returned as raw bytes: decoding (OEM code pages) is the caller's job.
 */
import { execFile } from 'node:child_process';

export interface CommandResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface RunOptions {
  timeoutMs?: number;
  maxBuffer?: number;
  /** Extra variables on top of the minimal environment. */
  env?: Record<string, string>;
  signal?: AbortSignal;
}

/** A function with the shape of `runCommand`; backends take one so tests can inject fakes. */
export type RunFn = (file: string, args: readonly string[], options?: RunOptions) => Promise<CommandResult>;

export class CommandError extends Error {
  readonly file: string;
  readonly args: readonly string[];
  readonly exitCode: number | null;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly timedOut: boolean;
  readonly notFound: boolean;

  constructor(init: {
    file: string;
    args: readonly string[];
    exitCode: number | null;
    stdout?: Buffer;
    stderr?: Buffer;
    timedOut?: boolean;
    notFound?: boolean;
    cause?: unknown;
  }) {
    const what = `${init.file} ${init.args.join(' ')}`.trim();
    const why = init.notFound
      ? 'command not found'
      : init.timedOut
        ? 'timed out'
        : `exit code ${init.exitCode ?? 'unknown'}`;
    super(`${what}: ${why}`, { cause: init.cause });
    this.name = 'CommandError';
    this.file = init.file;
    this.args = init.args;
    this.exitCode = init.exitCode;
    this.stdout = init.stdout ?? Buffer.alloc(0);
    this.stderr = init.stderr ?? Buffer.alloc(0);
    this.timedOut = init.timedOut ?? false;
    this.notFound = init.notFound ?? false;
  }
}

/** Variables a child may legitimately need; everything else in our own environment stays ours. */
const passThrough = [
  'PATH',
  'SystemRoot',
  'SYSTEMROOT',
  'windir',
  'ComSpec',
  'TEMP',
  'TMP',
  'HOME',
  'LANG',
  'LC_ALL',
];

const childEnv = (extra: Record<string, string> | undefined): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const key of passThrough) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...extra };
};

export const runCommand: RunFn = (file, args, options = {}) =>
  new Promise((resolve, reject) => {
    execFile(
      file,
      [...args],
      {
        encoding: 'buffer',
        timeout: options.timeoutMs ?? 10_000,
        killSignal: 'SIGKILL',
        maxBuffer: options.maxBuffer ?? 4 * 1024 * 1024,
        windowsHide: true,
        shell: false,
        env: childEnv(options.env),
        signal: options.signal,
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ stdout, stderr, exitCode: 0 });
          return;
        }
        const err = error as NodeJS.ErrnoException & {
          code?: string | number;
          killed?: boolean;
          signal?: string;
        };
        const notFound = err.code === 'ENOENT';
        const timedOut = Boolean(err.killed) && err.signal === 'SIGKILL' && !options.signal?.aborted;
        const exitCode = typeof err.code === 'number' ? err.code : null;
        if (exitCode !== null && !timedOut) {
          // A non-zero exit is an answer, not a failure of the wrapper: callers parse stderr/stdout.
          resolve({ stdout, stderr, exitCode });
          return;
        }
        reject(new CommandError({ file, args, exitCode, stdout, stderr, timedOut, notFound, cause: error }));
      },
    );
  });
