#!/usr/bin/env node
// An icacls.exe emulator for tests, usable as POWERPLAN_ICACLS. It keeps the DACL of each path it
// was asked about in a JSON state file in %TMP% (the command wrapper passes TMP through), starting
// from the real DACL of a folder created under C:\ProgramData (test/fixtures/icacls). It answers:
//   icacls <path> /save <file> [/q]                       the DACL as a /save file (UTF-16LE)
//   icacls <path> /inheritance:r /grant:r <sid>:<perm>... drops inherited entries, sets explicit ones
// Anything else: the usage error with exit code 87, as icacls does for a parameter it rejects.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const stateDir = process.env.TMP || tmpdir();
const statePath = join(stateDir, 'icacls-emu-state.json');
const logPath = join(stateDir, 'icacls-emu-argv.jsonl');
const captured = readFileSync(
  join(here, '..', 'fixtures', 'icacls', 'programdata-subfolder.sddl.txt'),
  'utf8',
).trim();
/** A /save file holds the DACL only: the owner (O:) and group (G:) of the capture are dropped. */
const inheritedFromProgramData = captured.slice(captured.indexOf('D:'));

const args = process.argv.slice(2);
appendFileSync(logPath, `${JSON.stringify(args)}\n`);
const state = existsSync(statePath) ? JSON.parse(readFileSync(statePath, 'utf8')) : {};
const [path, ...rest] = args;
const dacl = state[path] ?? inheritedFromProgramData;

if (!path || !existsSync(path)) {
  process.stderr.write(
    `${path}: The system cannot find the file specified.\r\nSuccessfully processed 0 files; Failed processing 1 files\r\n`,
  );
  process.exit(2);
}

if (rest[0] === '/save' && rest[1]) {
  writeFileSync(rest[1], Buffer.from(`${basename(path)}\r\n${dacl}\r\n`, 'utf16le'));
  if (!rest.includes('/q')) process.stdout.write(`processed file: ${path}\r\n`);
  process.stdout.write('Successfully processed 1 files; Failed processing 0 files\r\n');
  process.exit(0);
}

const aliases = { 'S-1-5-18': 'SY', 'S-1-5-32-544': 'BA', 'S-1-5-32-545': 'BU', 'S-1-1-0': 'WD' };
const perms = { F: 'FA', M: '0x1301bf', RX: '0x1200a9', R: '0x120089', W: '0x100116' };
if (rest[0] === '/inheritance:r' && rest[1] === '/grant:r' && rest.length > 2) {
  let aces = [...dacl.matchAll(/\(([^)]*)\)/g)]
    .map((m) => m[1])
    .filter((a) => !a.split(';')[1].includes('ID'));
  for (const grant of rest.slice(2)) {
    const m = /^\*(S-[\d-]+):((?:\((?:OI|CI|IO|NP)\))*)\(?([A-Z]+)\)?$/.exec(grant);
    if (!m || !perms[m[3]]) {
      process.stderr.write(`Invalid parameter "${grant}"\r\n`);
      process.exit(87);
    }
    const sid = aliases[m[1]] ?? m[1];
    const flags = m[2].replace(/[()]/g, '');
    aces = aces.filter((a) => a.split(';')[5] !== sid);
    aces.push(`A;${flags};${perms[m[3]]};;;${sid}`);
  }
  state[path] = `D:PAI${aces.map((a) => `(${a})`).join('')}`;
  writeFileSync(statePath, JSON.stringify(state));
  process.stdout.write(
    `processed file: ${path}\r\nSuccessfully processed 1 files; Failed processing 0 files\r\n`,
  );
  process.exit(0);
}

process.stderr.write(`Invalid parameter "${rest[0] ?? ''}"\r\n`);
process.exit(87);
