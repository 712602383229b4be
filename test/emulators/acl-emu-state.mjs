// The state the icacls and PowerShell emulators share: the DACL and the owner of each path they
// were asked about, in a JSON file in %TMP% (the command wrapper passes TMP through). A path not
// in it has the real security descriptor of a folder created under C:\ProgramData
// (test/fixtures/icacls/programdata-subfolder.sddl.txt): owner Administrators, DACL inherited.
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const stateDir = process.env.TMP || tmpdir();
const statePath = join(stateDir, 'icacls-emu-state.json');
const captured = readFileSync(
  join(here, '..', 'fixtures', 'icacls', 'programdata-subfolder.sddl.txt'),
  'utf8',
).trim();

/** A /save file holds the DACL only: the owner (O:) and group (G:) of the capture are not in it. */
export const inheritedFromProgramData = captured.slice(captured.indexOf('D:'));
export const capturedOwner = /^O:(S-1-[\d-]+|[A-Z]{2})/.exec(captured)[1];

export const loadState = () => {
  const s = existsSync(statePath) ? JSON.parse(readFileSync(statePath, 'utf8')) : {};
  return { dacl: s.dacl ?? {}, owner: s.owner ?? {} };
};
export const saveState = (state) => writeFileSync(statePath, JSON.stringify(state));

/**
 * The key of a path in the state: its device and inode, so that, as on Windows, the security
 * descriptor stays with the file or directory when it is renamed.
 */
export const keyOf = (path) => {
  const s = statSync(path);
  return `${s.dev}:${s.ino}`;
};

/** The entries of a DACL, each without its outer parentheses; a condition's own ones are kept. */
export const entries = (text) => {
  const out = [];
  let depth = 0;
  let start = 0;
  for (let i = text.indexOf('('); i >= 0 && i < text.length; i++) {
    if (text[i] === '(' && depth++ === 0) start = i + 1;
    else if (text[i] === ')' && --depth === 0) out.push(text.slice(start, i));
  }
  return out;
};

/**
 * The DACL of `path`: its own when set, else what its parent passes down when the parent's is set
 * (entries with OI reach files, CI directories; they arrive marked ID), else the captured
 * ProgramData one.
 */
export const daclOf = (state, path) => {
  const own = state.dacl[keyOf(path)];
  if (own) return own;
  const parent = dirname(path);
  if (parent === path || !existsSync(parent)) return inheritedFromProgramData;
  const from = state.dacl[keyOf(parent)] ? daclOf(state, parent) : undefined;
  if (!from) return inheritedFromProgramData;
  const dir = statSync(path).isDirectory();
  const passed = entries(from)
    .map((a) => a.split(';'))
    .filter(([, flags]) => flags.includes(dir ? 'CI' : 'OI'))
    .map(([type, flags, ...rest]) => [type, `${dir ? flags.replace('ID', '') : ''}ID`, ...rest].join(';'));
  return `D:AI${passed.map((a) => `(${a})`).join('')}`;
};

/** `path` and, recursively, everything in it when it is a directory. */
export const tree = (path) => {
  if (!statSync(path).isDirectory()) return [path];
  return [path, ...readdirSync(path).flatMap((n) => tree(join(path, n)))];
};

/** Appends this emulator's argv to its log, which tests read to see what reached a command line. */
export const logArgs = (name, args) =>
  appendFileSync(join(stateDir, `${name}-emu-argv.jsonl`), `${JSON.stringify(args)}\n`);
