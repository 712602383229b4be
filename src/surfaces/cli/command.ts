/**
 * What a CLI command is given and returns, shared by the CLI and the modules that add commands to
 * it (token commands), so that neither imports the other's types.
 */
import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
  err: (text: string) => void;
  /** True when stderr is a terminal: progress is shown there. */
  interactive: boolean;
}

/** A command that is not an operation: it runs with the parsed config and returns an exit code. */
export interface ServiceCommand {
  command: string[];
  summary: string;
  usage?: string;
  options?: ParseArgsConfig['options'];
  /** Its --help lists every setting with its variable (serve, mcp). */
  settings?: boolean;
  /** Parses config and builds deps itself when it needs them (serve does, openapi does not). */
  run: (args: {
    values: Record<string, unknown>;
    positionals: string[];
    config: () => Config;
    deps: () => Promise<Deps>;
    io: CliIo;
  }) => Promise<number | 'keep-running'>;
}
