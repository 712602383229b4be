export interface StartPoint {
  name: string;
  file: string;
  flags: string[];
  /** The flags it must carry (all of deploy/v8-flags.json's, or those NODE_OPTIONS allows). */
  expected: string[];
  run: { command: string; args: string[]; env?: Record<string, string> } | null;
}
export function v8Flags(): string[];
export function nodeOptionsFlags(): string[];
export function serviceExecArgv(): string[];
export function startPoints(): StartPoint[];
