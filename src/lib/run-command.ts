/**
 * The one wrapper around external commands (powercfg, tuned-adm, powerprofilesctl, ...).
 * execFile with an argument array (never a shell), a timeout, a maxBuffer, windowsHide and a fresh
 * environment. Output is returned as raw bytes: decoding (OEM code pages) is the caller's job.
 * A command the system could not start for want of a resource (a process, a file handle, memory:
 * nothing ran) is started once more after a short pause.
 */
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

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
  /** The system's error code when the command could not be started at all (nothing ran). */
  readonly notStarted: string | undefined;

  constructor(init: {
    file: string;
    args: readonly string[];
    exitCode: number | null;
    stdout?: Buffer;
    stderr?: Buffer;
    timedOut?: boolean;
    notFound?: boolean;
    notStarted?: string;
    cause?: unknown;
  }) {
    const what = `${init.file} ${init.args.join(' ')}`.trim();
    const why = init.notFound
      ? 'command not found'
      : init.notStarted
        ? `could not be started (${init.notStarted})`
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
    this.notStarted = init.notStarted;
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

/**
 * Start failures worth one more try: the system was out of processes, file handles or memory, or
 * could not say why (Windows' CreateProcess errors that libuv does not map are `UNKNOWN`).
 */
const TRANSIENT_START = new Set(['EAGAIN', 'EMFILE', 'ENFILE', 'ENOMEM', 'EBUSY', 'UNKNOWN']);
/** The pause before the second start. */
export const START_RETRY_MS = 250;

/** A system error of starting the process (`spawn`, `spawn <file>`), as opposed to its exit. */
const startError = (e: unknown): string | undefined => {
  const err = e as NodeJS.ErrnoException;
  return typeof err?.syscall === 'string' && err.syscall.startsWith('spawn') && typeof err.code === 'string'
    ? err.code
    : undefined;
};

const runOnce: RunFn = (file, args, options = {}) =>
  new Promise((resolve, reject) => {
    const notStarted = (e: unknown, code: string) =>
      new CommandError({
        file,
        args,
        exitCode: null,
        notFound: code === 'ENOENT',
        notStarted: code,
        cause: e,
      });
    try {
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
          const start = startError(error);
          if (start !== undefined) {
            reject(notStarted(error, start));
            return;
          }
          const err = error as NodeJS.ErrnoException & {
            code?: string | number;
            killed?: boolean;
            signal?: string;
          };
          const timedOut = Boolean(err.killed) && err.signal === 'SIGKILL' && !options.signal?.aborted;
          const exitCode = typeof err.code === 'number' ? err.code : null;
          if (exitCode !== null && !timedOut) {
            // A non-zero exit is an answer, not a failure of the wrapper: callers parse stderr/stdout.
            resolve({ stdout, stderr, exitCode });
            return;
          }
          reject(new CommandError({ file, args, exitCode, stdout, stderr, timedOut, cause: error }));
        },
      );
    } catch (e) {
      // Node throws at once, rather than calling back, for most start errors (UNKNOWN among them).
      const start = startError(e);
      reject(start === undefined ? e : notStarted(e, start));
    }
  });

export const runCommand: RunFn = async (file, args, options = {}) => {
  try {
    return await runOnce(file, args, options);
  } catch (e) {
    const code = e instanceof CommandError ? e.notStarted : undefined;
    if (code === undefined || !TRANSIENT_START.has(code) || options.signal?.aborted) throw e;
    await sleep(START_RETRY_MS, undefined, { signal: options.signal });
    return runOnce(file, args, options);
  }
};
