/**
 * How the Linux backend calls its external tools (tuned-adm, powerprofilesctl to change a profile
 * and verify it; systemd-detect-virt once): through run-command only, found on PATH (which tests
 * override to put emulators first), with "not installed" as an answer rather than an error. Reads
 * start no program (tuned-state.ts, ppd-bus.ts).
 */
import { errorMessage, PowerPlanError } from '../../domain/errors.ts';
import { CommandError, type RunFn } from '../../lib/run-command.ts';

export interface CommandOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface Commands {
  tunedAdm: string;
  powerprofilesctl: string;
  systemdDetectVirt: string;
}

export interface Runner {
  run: RunFn;
  files: Commands;
  /** Extra environment for the children, e.g. `{ PATH }` when the search path is overridden. */
  env: Record<string, string> | undefined;
}

/** Runs a tool; null when it is not installed. A timeout is an error: the daemon hangs. */
export const exec = async (
  runner: Runner,
  file: string,
  args: readonly string[],
): Promise<CommandOutput | null> => {
  try {
    const r = await runner.run(file, args, { timeoutMs: 15_000, ...(runner.env ? { env: runner.env } : {}) });
    return { exitCode: r.exitCode, stdout: r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8') };
  } catch (e) {
    if (e instanceof CommandError && e.notFound) return null;
    if (e instanceof CommandError && e.timedOut) {
      throw new PowerPlanError('timeout', `${file} ${args.join(' ')} did not answer in time.`, undefined, {
        cause: e,
      });
    }
    throw new PowerPlanError(
      'os_error',
      `${file} ${args.join(' ')} could not be run: ${errorMessage(e)}`,
      undefined,
      {
        cause: e,
      },
    );
  }
};

/** The first line of what a failed command said, for messages. */
export const said = (out: CommandOutput): string =>
  (out.stderr.trim() || out.stdout.trim()).split(/\r?\n/).find((l) => l.trim()) ??
  `exit code ${out.exitCode}`;
