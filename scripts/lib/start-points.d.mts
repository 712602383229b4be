export interface StartPoint {
  name: string;
  file: string;
  flags: string[];
  run: { command: string; args: string[]; env?: Record<string, string> } | null;
}
export function v8Flags(): string[];
export function startPoints(): StartPoint[];
