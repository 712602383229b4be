#!/usr/bin/env node
// A powershell.exe emulator for tests, usable as POWERPLAN_POWERSHELL. It answers the one command
// the product runs, the owner of each path in $env:POWERPLAN_ACL_PATHS (one per line) as SDDL
// (`O:BA`), a line each, from the state it shares with the icacls emulator (acl-emu-state.mjs). Anything else: exit code 1 with
// PowerShell's error for a command it does not know.
import { existsSync } from 'node:fs';
import { capturedOwner, keyOf, loadState, logArgs } from './acl-emu-state.mjs';

const args = process.argv.slice(2);
logArgs('powershell', args);
const script = args[args.indexOf('-Command') + 1] ?? '';
const paths = (process.env.POWERPLAN_ACL_PATHS ?? '').split('\n');
if (
  !args.includes('-Command') ||
  !script.includes('GetAccessControl') ||
  !script.includes('$env:POWERPLAN_ACL_PATHS')
) {
  process.stderr.write(`The term '${script.split(' ')[0]}' is not recognized as the name of a cmdlet.\r\n`);
  process.exit(1);
}
const state = loadState();
for (const path of paths) {
  if (!path || !existsSync(path)) {
    process.stderr.write(`Exception calling "GetAccessControl": "Could not find file '${path}'."\r\n`);
    process.exit(1);
  }
  process.stdout.write(`O:${state.owner[keyOf(path)] ?? capturedOwner}\r\n`);
}
