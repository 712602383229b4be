// The state the icacls and PowerShell emulators share: the DACL and the owner of each path they
// were asked about, in a JSON file in %TMP% (the command wrapper passes TMP through). A path not
// in it has the real security descriptor of a folder created under C:\ProgramData
// (test/fixtures/icacls/programdata-subfolder.sddl.txt): owner Administrators, DACL inherited.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
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

/** Appends this emulator's argv to its log, which tests read to see what reached a command line. */
export const logArgs = (name, args) =>
  appendFileSync(join(stateDir, `${name}-emu-argv.jsonl`), `${JSON.stringify(args)}\n`);
