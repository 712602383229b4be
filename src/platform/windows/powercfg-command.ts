/**
 * powercfg.exe through the one command wrapper: its output decoded from the OEM code page, and
 * every failure turned into a PowerPlanError that says what to do (missing, hung, refused for lack
 * of rights, unknown scheme, rejected parameters), read from the message in any known language.
 * `/qh` (hidden settings included) falls back to `/query` once where Windows lacks it.
 */
import { PowerPlanError } from '../../domain/errors.ts';
import { CommandError, type CommandResult, type RunFn } from '../../lib/run-command.ts';
import { parseQuery, type QueryResult } from './parse.ts';
import { classifyPowercfgFailure } from './powercfg-errors.ts';

export const ELEVATE =
  'Changing the power plan needs administrator rights: run the service elevated (as an administrator) or as LocalSystem.';

/** A command's text for a message: at most 300 characters, on one line. */
export const quote = (s: string) =>
  (s.length > 300 ? `${s.slice(0, 300)}...` : s).replace(/\s+/g, ' ').trim();

export interface PowercfgOptions {
  path: string;
  run: RunFn;
  timeoutMs: number;
  decode: (bytes: Buffer) => Promise<string>;
}

export const createPowercfg = ({ path, run, timeoutMs, decode }: PowercfgOptions) => {
  /** Whether `/qh` (query including hidden settings) exists here; unknown until first tried. */
  let qhSupported: boolean | undefined;

  const notRun = (what: string, e: unknown): PowerPlanError => {
    if (e instanceof CommandError && e.notFound) {
      return new PowerPlanError(
        'os_error',
        `powercfg was not found at '${path}'. Set POWERPLAN_POWERCFG to the full path of powercfg.exe (normally %SystemRoot%\\System32\\powercfg.exe).`,
        { command: what },
        { cause: e },
      );
    }
    if (e instanceof CommandError && e.timedOut) {
      return new PowerPlanError(
        'timeout',
        `${what} did not answer within ${timeoutMs} ms and was stopped. The service is still running; try again, and check the machine's power service if it keeps happening.`,
        { command: what },
        { cause: e },
      );
    }
    return new PowerPlanError('os_error', `${what} could not be run: ${(e as Error).message}`, {
      command: what,
    });
  };

  /** Runs powercfg and answers its decoded stdout, or throws a PowerPlanError that says what to do. */
  const powercfg = async (args: string[]): Promise<string> => {
    const what = `powercfg ${args.join(' ')}`;
    let result: CommandResult;
    try {
      result = await run(path, args, { timeoutMs });
    } catch (e) {
      throw notRun(what, e);
    }
    const stdout = await decode(result.stdout);
    if (result.exitCode === 0) return stdout;
    const message = quote((await decode(result.stderr)) || stdout);
    const details = { command: what, exitCode: result.exitCode, message };
    switch (classifyPowercfgFailure(message)) {
      case 'forbidden':
        throw new PowerPlanError('forbidden', `${what} was refused ("${message}"). ${ELEVATE}`, details);
      case 'not_found':
        throw new PowerPlanError(
          'not_found',
          `${what}: the power scheme or setting does not exist ("${message}").`,
          details,
        );
      case 'invalid_parameters':
        throw new PowerPlanError('os_error', `${what}: powercfg rejected the parameters ("${message}").`, {
          ...details,
          failure: 'invalid_parameters',
        });
      default:
        throw new PowerPlanError(
          'os_error',
          `${what} failed with exit code ${result.exitCode}: ${message}`,
          details,
        );
    }
  };

  /** `/qh` includes hidden settings (boost, EPP, personality); Windows versions without it get `/query`. */
  const query = async (tail: string[]): Promise<QueryResult> => {
    if (qhSupported !== false) {
      try {
        const out = await powercfg(['/qh', ...tail]);
        qhSupported = true;
        return parseQuery(out);
      } catch (e) {
        if (!(e instanceof PowerPlanError) || e.code !== 'os_error' || qhSupported === true) throw e;
        const out = await powercfg(['/query', ...tail]);
        qhSupported = false;
        return parseQuery(out);
      }
    }
    return parseQuery(await powercfg(['/query', ...tail]));
  };

  /** powercfg answered, but without the scheme line its command always prints. */
  const unexpected = (what: string, out: string) =>
    new PowerPlanError(
      'os_error',
      `powercfg ${what} answered without a power scheme: ${quote(out) || '(nothing)'}`,
    );

  return { powercfg, query, unexpected };
};

export type Powercfg = ReturnType<typeof createPowercfg>;
