#!/usr/bin/env node
// A powershell.exe emulator for tests, usable as POWERPLAN_POWERSHELL. It answers the one command
// the product runs, the owner of the path in $env:POWERPLAN_ACL_PATH as SDDL (`O:BA`), from the
// state it shares with the icacls emulator (acl-emu-state.mjs). Anything else: exit code 1 with
// PowerShell's error for a command it does not know.
import { existsSync } from 'node:fs';
import { capturedOwner, loadState, logArgs } from './acl-emu-state.mjs';

const args = process.argv.slice(2);
logArgs('powershell', args);
const script = args[args.indexOf('-Command') + 1] ?? '';
const path = process.env.POWERPLAN_ACL_PATH;
if (
  !args.includes('-Command') ||
  !script.includes('GetAccessControl') ||
  !script.includes('$env:POWERPLAN_ACL_PATH')
) {
  process.stderr.write(`The term '${script.split(' ')[0]}' is not recognized as the name of a cmdlet.\r\n`);
  process.exit(1);
}
if (!path || !existsSync(path)) {
  process.stderr.write(`Exception calling "GetAccessControl": "Could not find file '${path ?? ''}'."\r\n`);
  process.exit(1);
}
process.stdout.write(`O:${loadState().owner[path] ?? capturedOwner}\r\n`);
