/** The CLI as a child process, and a real `powerplan serve` on a free loopback port. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { binPath, type ProcessResult, runProcess, startServing } from '../../scripts/lib/serve.mjs';
import { childBaseEnv } from './commands.ts';

export { binPath };

/** The local administrator credential in a state directory (`admin.token`: the token, a newline). */
export const readAdminToken = (stateDir: string | undefined): string =>
  stateDir ? readFileSync(join(stateDir, 'admin.token'), 'utf8').trim() : '';

export type CliResult = ProcessResult;

/** Runs `powerplan <args>` as a child process, the way a user or Ansible does. */
export const runCli = (
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<CliResult> =>
  runProcess(process.execPath, [binPath, ...args], { env: { ...childBaseEnv(), ...env }, timeoutMs });

export interface ServerProcess {
  url: string;
  /**
   * The local administrator credential the server wrote into its state directory at this start
   * (control over TCP; the clients use the control socket instead); without it a loopback caller
   * may only read.
   */
  admin: string;
  /** `Authorization: Bearer <admin>`, to spread into a request's headers. */
  asAdmin: { authorization: string };
  child: ChildProcess;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
  /** What the server printed so far (stdout and stderr), for failure messages. */
  output: () => string;
}

/** Starts `powerplan serve` on a free port and resolves once it listens. */
export const startServer = async (
  env: Record<string, string>,
  extraArgs: string[] = [],
): Promise<ServerProcess> => {
  const served = await startServing(process.execPath, [binPath, 'serve', ...extraArgs], {
    env: { ...childBaseEnv(), POWERPLAN_PORT: '0', ...env },
    timeoutMs: 20_000,
  });
  const admin = readAdminToken(env.POWERPLAN_STATE_DIR);
  return {
    url: served.url,
    admin,
    asAdmin: { authorization: `Bearer ${admin}` },
    child: served.child,
    stop: served.stop,
    output: served.output,
  };
};
