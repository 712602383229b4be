/**
 * Entry point of the single executable (Node SEA, see docs/WINDOWS-SERVICE.md): the same as
 * src/main.ts, without its top-level await, which a CommonJS bundle cannot contain.
 */
import { runCli } from '../../src/surfaces/cli/cli.ts';

void runCli(process.argv.slice(2), {
  env: process.env,
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  interactive: Boolean(process.stderr.isTTY),
}).then((code) => {
  if (code !== 'keep-running') process.exitCode = code;
});
