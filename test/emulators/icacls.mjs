#!/usr/bin/env node
// An icacls.exe emulator for tests, usable as POWERPLAN_ICACLS. It keeps the DACL and the owner of
// each path it was asked about in the state it shares with the PowerShell emulator
// (acl-emu-state.mjs), starting from the real security descriptor of a folder created under
// C:\ProgramData (test/fixtures/icacls). It answers:
//   icacls <path> /save <file> [/q]                       the DACL as a /save file (UTF-16LE)
//   icacls <directory> /restore <file> [/q]               the DACLs of a /save file, for the names in it
//   icacls <path> /setowner <*sid> [/T]                   the owner (/T: of everything below too)
//   icacls <path> /reset [/T] [/q]                        the default (inherited) DACL (/T: below too)
// The state is kept by inode, so a rename keeps it, and a path without its own DACL gets what its
// parent passes down (its OI or CI entries), as on NTFS.
//   icacls <path> /inheritance:r /grant:r <sid>:<perm>... drops inherited entries, sets explicit ones
// Anything else: the usage error with exit code 87, as icacls does for a parameter it rejects.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  daclOf,
  entries,
  inheritedFromProgramData,
  keyOf,
  loadState,
  logArgs,
  saveState,
  tree,
} from './acl-emu-state.mjs';

const args = process.argv.slice(2);
logArgs('icacls', args);
const state = loadState();
const [path, ...rest] = args;
const done = (quiet = false) => {
  if (!quiet) process.stdout.write(`processed file: ${path}\r\n`);
  process.stdout.write('Successfully processed 1 files; Failed processing 0 files\r\n');
  process.exit(0);
};
const invalid = (what) => {
  process.stderr.write(`Invalid parameter "${what}"\r\n`);
  process.exit(87);
};

if (!path || !existsSync(path)) {
  process.stderr.write(
    `${path}: The system cannot find the file specified.\r\nSuccessfully processed 0 files; Failed processing 1 files\r\n`,
  );
  process.exit(2);
}
const dacl = daclOf(state, path);
/** /T: the path and everything below it. */
const targets = () => (rest.includes('/T') ? tree(path) : [path]);

if (rest[0] === '/save' && rest[1]) {
  writeFileSync(rest[1], Buffer.from(`${basename(path)}\r\n${dacl}\r\n`, 'utf16le'));
  done(rest.includes('/q'));
}

if (rest[0] === '/restore' && rest[1]) {
  const lines = readFileSync(rest[1])
    .toString('utf16le')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/);
  for (let i = 0; i + 1 < lines.length; i += 2) {
    if (lines[i + 1].startsWith('D:')) state.dacl[keyOf(join(path, lines[i]))] = lines[i + 1];
  }
  saveState(state);
  done(rest.includes('/q'));
}

const aliases = { 'S-1-5-18': 'SY', 'S-1-5-32-544': 'BA', 'S-1-5-32-545': 'BU', 'S-1-1-0': 'WD' };
const sidOf = (arg) => {
  const m = /^\*(S-1-[\d-]+)$/.exec(arg ?? '');
  return m ? (aliases[m[1]] ?? m[1]) : undefined;
};

if (rest[0] === '/setowner' && (rest.length === 2 || (rest.length === 3 && rest[2] === '/T'))) {
  const sid = sidOf(rest[1]);
  if (!sid) invalid(rest[1]);
  for (const p of targets()) state.owner[keyOf(p)] = sid;
  saveState(state);
  done();
}

if (rest[0] === '/reset' && rest.length <= 3 && rest.slice(1).every((a) => a === '/T' || a === '/q')) {
  // The default ACL: what the parent passes down (a folder under C:\ProgramData); below it, with
  // /T, what the path passes down.
  for (const p of targets()) delete state.dacl[keyOf(p)];
  state.dacl[keyOf(path)] = inheritedFromProgramData;
  saveState(state);
  done(rest.includes('/q'));
}

const perms = { F: 'FA', M: '0x1301bf', RX: '0x1200a9', R: '0x120089', W: '0x100116' };
if (rest[0] === '/inheritance:r' && rest[1] === '/grant:r' && rest.length > 2) {
  let aces = entries(dacl).filter((a) => !a.split(';')[1].includes('ID'));
  for (const grant of rest.slice(2)) {
    const m = /^(\*S-[\d-]+):((?:\((?:OI|CI|IO|NP)\))*)\(?([A-Z]+)\)?$/.exec(grant);
    if (!m || !perms[m[3]]) invalid(grant);
    const sid = sidOf(m[1]);
    const flags = m[2].replace(/[()]/g, '');
    aces = aces.filter((a) => a.split(';')[5] !== sid);
    aces.push(`A;${flags};${perms[m[3]]};;;${sid}`);
  }
  state.dacl[keyOf(path)] = `D:PAI${aces.map((a) => `(${a})`).join('')}`;
  saveState(state);
  done();
}

invalid(rest[0] ?? '');
