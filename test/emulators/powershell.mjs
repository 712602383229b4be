#!/usr/bin/env node
// A powershell.exe emulator for tests, usable as POWERPLAN_POWERSHELL. It answers the two commands
// the product runs: the processor counters (below), and the owner of each path in $env:POWERPLAN_ACL_PATHS (one per line) as SDDL
// (`O:BA`), a line each, from the state it shares with the icacls emulator (acl-emu-state.mjs). Anything else: exit code 1 with
// PowerShell's error for a command it does not know.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturedOwner, keyOf, loadState, logArgs } from './acl-emu-state.mjs';

const args = process.argv.slice(2);
logArgs('powershell', args);
const script = args[args.indexOf('-Command') + 1] ?? '';
// The processor counters: the next of the captures listed in %TMP%/powershell-emu-counters.json, or in
// the file POWERPLAN_EMU_COUNTERS names ({ "files": [...], "next": 0 }), the last one again once all were given.
if (script.includes('Win32_PerfRawData_Counters_ProcessorInformation') && script.includes('Format-List')) {
  const path =
    process.env.POWERPLAN_EMU_COUNTERS || join(process.env.TMP || tmpdir(), 'powershell-emu-counters.json');
  if (!existsSync(path)) {
    process.stderr.write(
      'Get-CimInstance : Invalid class "Win32_PerfRawData_Counters_ProcessorInformation"\r\n',
    );
    process.exit(1);
  }
  const list = JSON.parse(readFileSync(path, 'utf8'));
  process.stdout.write(readFileSync(list.files[Math.min(list.next, list.files.length - 1)], 'utf8'));
  writeFileSync(path, JSON.stringify({ ...list, next: list.next + 1 }));
  process.exit(0);
}
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
