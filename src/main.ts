/** Process entry point of the `powerplan` command. */
import { runCli } from './surfaces/cli/cli.ts';

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  interactive: Boolean(process.stderr.isTTY),
});
if (code !== 'keep-running') process.exitCode = code;
