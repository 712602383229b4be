/**
 * Windows permissions of the state directory and the token file, against the icacls emulator fed
 * by the real DACL of a folder created under C:\ProgramData: an open directory is found open, a
 * directory the service creates gets SYSTEM and Administrators only (fixed), and a start over an
 * open one is refused with exit code 2 and the command that fixes it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PowerPlanError } from '../../src/domain/errors.ts';
import { type RunFn, runCommand } from '../../src/lib/run-command.ts';
import { guardStatePermissions, readDacl, writersBeyondAdmins } from '../../src/lib/windows-acl.ts';
import { emulatorCommand } from '../support/commands.ts';
import { repoRoot } from '../support/deps.ts';
import { runCli } from '../support/processes.ts';

const ICACLS = emulatorCommand('icacls');
const captured = readFileSync(
  join(repoRoot, 'test/fixtures/icacls/programdata-subfolder.sddl.txt'),
  'utf8',
).trim();

describe('Windows ACL of the state directory and token file (icacls emulator)', () => {
  let dir: string;
  let run: RunFn;
  const calls = async () =>
    (await readFile(join(dir, 'icacls-emu-argv.jsonl'), 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string[]);
  const options = () => ({ icacls: ICACLS, run, mkdir: (p: string) => mkdirSync(p, { recursive: true }) });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-acl-'));
    run = (file, args, o = {}) => runCommand(file, args, { ...o, env: { ...o.env, TMP: dir } });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('open: the real inherited ProgramData DACL lets BUILTIN\\Users write; SYSTEM, Administrators and CREATOR OWNER are not counted', () => {
    assert.deepEqual(writersBeyondAdmins(captured), ['BU']);
    assert.deepEqual(writersBeyondAdmins('D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)'), []);
    // Read access for Users is fine; write access by SID, Everyone or an unknown right is not.
    assert.deepEqual(writersBeyondAdmins('D:PAI(A;OICI;FA;;;SY)(A;OICI;0x1200a9;;;BU)'), []);
    assert.deepEqual(writersBeyondAdmins('D:P(A;;0x1301bf;;;S-1-5-32-545)(A;;FA;;;WD)(A;;ZZ;;;AU)'), [
      'S-1-5-32-545',
      'WD',
      'AU',
    ]);
    // A deny entry grants nothing; no DACL at all grants everyone.
    assert.deepEqual(writersBeyondAdmins('D:P(D;;FA;;;BU)(A;;FA;;;SY)'), []);
    assert.notDeepEqual(writersBeyondAdmins('O:BAG:SY'), []);
  });

  it('fixed: a state directory the service creates gets SYSTEM and Administrators only, by SID, and passes', async () => {
    const stateDir = join(dir, 'new-state');
    await guardStatePermissions({ stateDir }, options());
    const grant = (await calls()).find((c) => c[0] === stateDir && c.includes('/grant:r'));
    assert.deepEqual(grant, [
      stateDir,
      '/inheritance:r',
      '/grant:r',
      '*S-1-5-18:(OI)(CI)F',
      '*S-1-5-32-544:(OI)(CI)F',
    ]);
    assert.equal(await readDacl(stateDir, options()), 'D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)');
  });

  it('refused: an existing state directory or token file that Users can write stops the start, naming the fix', async () => {
    const stateDir = join(dir, 'planted');
    mkdirSync(stateDir);
    await assert.rejects(guardStatePermissions({ stateDir }, options()), (e: PowerPlanError) => {
      assert.equal(e.details?.unsafePermissions, true);
      assert.match(
        e.message,
        /state directory .*planted can be written by principals other than SYSTEM and Administrators \(BU\)/,
      );
      assert.match(
        e.message,
        /icacls .*planted \/inheritance:r \/grant:r \*S-1-5-18:\(OI\)\(CI\)F \*S-1-5-32-544:\(OI\)\(CI\)F/,
      );
      return true;
    });
    const tokenFile = join(dir, 'tokens.json');
    await writeFile(tokenFile, '{"tokens":[]}');
    const secured = join(dir, 'secured');
    await guardStatePermissions({ stateDir: secured }, options());
    await assert.rejects(
      guardStatePermissions({ stateDir: secured, tokenFile }, options()),
      /token file .*tokens\.json/,
    );
  });

  it('refused, then fixed, through the CLI: exit code 2 with the command, then the command runs once fixed', async () => {
    const stateDir = join(dir, 'cli-state');
    mkdirSync(stateDir);
    const env = {
      POWERPLAN_STATE_DIR: stateDir,
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_ACL_CHECK: 'always',
      POWERPLAN_ICACLS: ICACLS,
      TMP: dir,
    };
    const refused = await runCli(['active'], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /can be written by principals other than SYSTEM and Administrators/);
    const fix = /icacls (.+)\n/.exec(refused.stderr)![1]!.split(' ');
    const fixed = await run(ICACLS, fix);
    assert.equal(fixed.exitCode, 0);
    const ok = await runCli(['active'], env);
    assert.equal(ok.code, 0, ok.stderr);
  });
});
