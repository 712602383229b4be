import type { ChildProcess } from 'node:child_process';

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}
export interface ProcessOptions {
  /** The child's whole environment (default: PATH and HOME of this process). */
  env?: Record<string, string>;
  cwd?: string;
  timeoutMs?: number;
}
export interface Serving {
  url: string;
  /** The standard output up to and including the "listening" line. */
  banner: string;
  child: ChildProcess;
  /** Milliseconds from spawn to the "listening" line. */
  listeningMs: number;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Everything it printed so far, standard output then standard error. */
  output(): string;
  /** Signals the process (SIGTERM unless told) unless it has exited; resolves with its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}
export declare const repoRoot: string;
export declare const binPath: string;
export declare const listeningUrl: (output: string) => string | undefined;
export declare const minimalEnv: () => Record<string, string>;
export declare const runProcess: (
  command: string,
  args: string[],
  options?: ProcessOptions,
) => Promise<ProcessResult>;
export declare const startServing: (
  command: string,
  args: string[],
  options?: ProcessOptions,
) => Promise<Serving>;
