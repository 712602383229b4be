import type { ChildProcess } from 'node:child_process';

export interface WineRunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}
export interface WinePrefix {
  env: Record<string, string | undefined>;
  run(
    file: string,
    args: string[],
    options?: { env?: Record<string, string>; cwd?: string; timeoutMs?: number },
  ): WineRunResult;
  spawn(
    file: string,
    args: string[],
    options?: { env?: Record<string, string>; cwd?: string; outFile?: string },
  ): ChildProcess;
}
export declare const WINE: string;
export declare const wineAvailable: () => boolean;
export declare const winPath: (linuxPath: string) => string;
export declare const openPrefix: (wineprefix: string, workDir: string) => WinePrefix;
export declare const createPrefix: (label?: string) => WinePrefix & { dir: string; close(): void };
