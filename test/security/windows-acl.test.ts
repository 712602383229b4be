/**
 * Windows permissions of the state directory and the token file, against the icacls and PowerShell
 * emulators fed by the real security descriptor of a folder created under C:\ProgramData: an open
 * directory is found open, a directory the service creates gets SYSTEM and Administrators only
 * (owner and DACL), and a start over an open one is refused with exit code 2 and the commands that
 * fix it. The SDDL reader itself is tested against real captures in windows-acl-sddl.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { PowerPlanError } from '../../src/domain/errors.ts';
import { type RunFn, runCommand } from '../../src/lib/run-command.ts';
import { createToken, TokenVerifier } from '../../src/lib/tokens.ts';
import { readDacl, readOwners, writersBeyondAdmins } from '../../src/lib/windows-acl.ts';
import { guardStatePermissions, refuseUnsafe } from '../../src/lib/windows-state-guard.ts';
import { emulatorCommand } from '../support/commands.ts';
import { repoRoot } from '../support/deps.ts';
import { runCli } from '../support/processes.ts';

const ICACLS = emulatorCommand('icacls');
const POWERSHELL = emulatorCommand('powershell');
/** A domain user's SID, the owner of test/fixtures/icacls/user-owned-folder.sddl.txt. */
const USER = 'S-1-5-21-758131494-606461608-3556270690-2176';
const captured = readFileSync(
  join(repoRoot, 'test/fixtures/icacls/programdata-subfolder.sddl.txt'),
  'utf8',
).trim();

describe('Windows ACL of the state directory and token file (icacls emulator)', () => {
  let dir: string;
  let run: RunFn;
  const calls = async (tool = 'icacls') =>
    (await readFile(join(dir, `${tool}-emu-argv.jsonl`), 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string[]);
  const options = () => ({
    icacls: ICACLS,
    powershell: POWERSHELL,
    run,
    mkdir: (p: string) => mkdirSync(p, { recursive: true }),
  });
  /** Gives `path` the DACL `sddl`, as `icacls <parent> /restore <file>` does with a /save file. */
  const plant = async (path: string, sddl: string) => {
    const file = join(dir, 'planted.acl');
    await writeFile(file, Buffer.from(`${basename(path)}\r\n${sddl}\r\n`, 'utf16le'));
    assert.equal((await run(ICACLS, [dirname(path), '/restore', file])).exitCode, 0);
  };
  /** Runs each `icacls ...` line of a refusal, in order, as an administrator would. */
  const runFix = async (message: string) => {
    const fixes = [...message.matchAll(/^\s*icacls (.+)$/gm)].map((m) => m[1]!.split(' '));
    assert.ok(fixes.length > 0, message);
    for (const fix of fixes) assert.equal((await run(ICACLS, fix)).exitCode, 0, fix.join(' '));
    return fixes;
  };

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
    // Created under a temporary name beside it, given its ACL there, then renamed into place: it
    // never exists under its name with the inherited ACL that lets Users write it.
    const changes = (await calls()).filter((c) => c[0]!.startsWith(`${stateDir}.`) && !c.includes('/save'));
    const tmp = changes[0]![0]!;
    assert.match(tmp, /new-state\.\d+\.[0-9a-f]{8}\.tmp$/);
    assert.deepEqual(changes, [
      [tmp, '/setowner', '*S-1-5-32-544', '/T'],
      [tmp, '/reset', '/T'],
      [tmp, '/inheritance:r', '/grant:r', '*S-1-5-18:(OI)(CI)F', '*S-1-5-32-544:(OI)(CI)F'],
    ]);
    assert.equal(existsSync(tmp), false);
    assert.deepEqual(
      (await calls()).filter((c) => c[0] === stateDir && !c.includes('/save')),
      [],
    );
    assert.equal(await readDacl(stateDir, options()), 'D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)');
    assert.deepEqual(await readOwners([stateDir], options()), ['BA']);
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
      // Recursive: a planted file inside keeps neither its owner nor its entries.
      assert.match(e.message, /icacls .*planted \/setowner \*S-1-5-32-544 \/T\n/);
      assert.match(e.message, /icacls .*planted \/reset \/T\n/);
      assert.match(
        e.message,
        /icacls .*planted \/inheritance:r \/grant:r \*S-1-5-18:\(OI\)\(CI\)F \*S-1-5-32-544:\(OI\)\(CI\)F/,
      );
      assert.doesNotMatch(e.message, /is owned by/, 'the captured folder is owned by Administrators');
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
      POWERPLAN_POWERSHELL: POWERSHELL,
      TMP: dir,
    };
    const refused = await runCli(['active'], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /can be written by principals other than SYSTEM and Administrators/);
    await runFix(refused.stderr);
    const ok = await runCli(['active'], env);
    assert.equal(ok.code, 0, ok.stderr);
  });
  it('without PowerShell, or with icacls failing: one line saying what failed and what to do, exit code 2', async () => {
    const env = (extra: Record<string, string>) => ({
      POWERPLAN_STATE_DIR: join(dir, 'no-tools'),
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_ACL_CHECK: 'always',
      POWERPLAN_ICACLS: ICACLS,
      POWERPLAN_POWERSHELL: POWERSHELL,
      TMP: dir,
      ...extra,
    });
    const said = (stderr: string) => {
      const lines = stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('{'));
      assert.equal(lines.length, 1, stderr);
      return lines[0]!;
    };
    const noPs = await runCli(['active'], env({ POWERPLAN_POWERSHELL: join(dir, 'no', 'powershell.exe') }));
    assert.equal(noPs.code, 2, noPs.stderr);
    assert.match(
      said(noPs.stderr),
      /^powerplan: cannot read the owner of .*no-tools: PowerShell \(.*powershell\.exe\) was not found\. To fix: check that Windows PowerShell runs .*POWERPLAN_POWERSHELL.*; then run it again\.$/,
    );
    // On POSIX the POSIX check has created the directory first, so reading its ACL fails; on
    // Windows setting the ACL of the temporary directory does, and nothing is left behind.
    const badIcacls = await runCli(
      ['active'],
      env({ POWERPLAN_ICACLS: '/bin/false', POWERPLAN_STATE_DIR: join(dir, 'no-icacls') }),
    );
    assert.equal(badIcacls.code, 2, badIcacls.stderr);
    assert.match(
      said(badIcacls.stderr),
      /^powerplan: cannot (?:read|set) the ACL of .*no-icacls\S*: icacls (?:exited with code 1 and printed nothing|\(\/bin\/false\) was not found)\. To fix: run powerplan from an elevated prompt .*POWERPLAN_ICACLS.*; then run it again\.$/,
    );
    if (process.platform === 'win32')
      assert.deepEqual(
        readdirSync(dir).filter((n) => n.startsWith('no-icacls')),
        [],
        'no state directory left without its ACL, under its name or the temporary one',
      );
  });

  it('attack, owner: a directory a user pre-created and then gave a clean DACL is refused for its owner, until the fix makes Administrators the owner', async () => {
    const stateDir = join(dir, 'pre-created');
    mkdirSync(stateDir);
    // The user created it (owner), an administrator later set the DACL: the owner keeps WRITE_DAC.
    assert.equal((await run(ICACLS, [stateDir, '/setowner', `*${USER}`])).exitCode, 0);
    assert.equal(
      (
        await run(ICACLS, [
          stateDir,
          '/inheritance:r',
          '/grant:r',
          '*S-1-5-18:(OI)(CI)F',
          '*S-1-5-32-544:(OI)(CI)F',
        ])
      ).exitCode,
      0,
    );
    assert.deepEqual(writersBeyondAdmins(await readDacl(stateDir, options())), []);
    let message = '';
    await assert.rejects(guardStatePermissions({ stateDir }, options()), (e: PowerPlanError) => {
      message = e.message;
      assert.equal(e.details?.owner, USER);
      assert.deepEqual(e.details?.writers, []);
      assert.match(e.message, new RegExp(`is owned by ${USER}, not SYSTEM or Administrators`));
      assert.doesNotMatch(e.message, /can be written by/);
      return true;
    });
    const fixes = await runFix(message);
    assert.deepEqual(fixes[0], [stateDir, '/setowner', '*S-1-5-32-544', '/T']);
    await guardStatePermissions({ stateDir }, options());
    assert.deepEqual(await readOwners([stateDir], options()), ['BA']);
  });

  it('attack, token file owned by a user: refused like the directory', async () => {
    const stateDir = join(dir, 'token-owner');
    await guardStatePermissions({ stateDir }, options());
    const tokenFile = join(stateDir, 'tokens.json');
    await writeFile(tokenFile, '{"tokens":[]}');
    assert.equal(
      (await run(ICACLS, [tokenFile, '/inheritance:r', '/grant:r', '*S-1-5-18:F', '*S-1-5-32-544:F']))
        .exitCode,
      0,
    );
    assert.equal((await run(ICACLS, [tokenFile, '/setowner', `*${USER}`])).exitCode, 0);
    await assert.rejects(
      guardStatePermissions({ stateDir, tokenFile }, options()),
      /token file .*tokens\.json is owned by S-1-5-21-/,
    );
  });

  it('attack, planted state files and admin.token: a file in the state directory that a user owns or can write is refused at start', async () => {
    const stateDir = join(dir, 'planted-files');
    await guardStatePermissions({ stateDir }, options());
    // Files the service writes inherit SYSTEM and Administrators from the directory: they pass.
    await writeFile(join(stateDir, 'holds.json'), '{}');
    await guardStatePermissions({ stateDir }, options());
    // Planted before the directory was fixed: a user's admin.token, a tokens.json Users can write.
    const admin = join(stateDir, 'admin.token');
    await writeFile(admin, 'pp_planted\n');
    assert.equal((await run(ICACLS, [admin, '/setowner', `*${USER}`])).exitCode, 0);
    let message = '';
    await assert.rejects(guardStatePermissions({ stateDir }, options()), (e: PowerPlanError) => {
      message = e.message;
      assert.match(e.message, new RegExp(`state file .*admin\\.token is owned by ${USER}`));
      return true;
    });
    // The fix printed for the directory (recursive) fixes the files in it too.
    const dirFix = join(dir, 'dir-fix');
    mkdirSync(dirFix);
    await writeFile(join(dirFix, 'admin.token'), 'x');
    await run(ICACLS, [join(dirFix, 'admin.token'), '/setowner', `*${USER}`]);
    let dirMessage = '';
    await assert.rejects(guardStatePermissions({ stateDir: dirFix }, options()), (e: PowerPlanError) => {
      dirMessage = e.message;
      return /state directory/.test(e.message);
    });
    await runFix(dirMessage);
    await guardStatePermissions({ stateDir: dirFix }, options());
    // And a file Users can write is refused like one a user owns.
    await run(ICACLS, [admin, '/setowner', '*S-1-5-32-544']);
    await plant(admin, 'D:AI(A;;FA;;;BU)(A;;FA;;;SY)');
    await assert.rejects(
      guardStatePermissions({ stateDir }, options()),
      /admin\.token can be written by .*\(BU\)/,
    );
    assert.match(message, /icacls .*admin\.token \/setowner/);
  });

  it('attack, token file planted at a reload: its owner is checked again, the tokens read before stay', async () => {
    const stateDir = join(dir, 'reload');
    await guardStatePermissions({ stateDir }, options());
    const tokenFile = join(stateDir, 'tokens.json');
    const { token } = await createToken(tokenFile, 'ops', ['control']);
    const problems: [string, boolean][] = [];
    const verifier = new TokenVerifier(
      tokenFile,
      (m, kept) => problems.push([m, kept]),
      (path) => refuseUnsafe([{ path, directory: false, what: 'token file' }], options()),
    );
    await verifier.refresh();
    assert.equal(verifier.size, 1);
    // A user's token file in its place (as after a rename by someone who could write there).
    await createToken(tokenFile, 'evil', ['control']);
    assert.equal((await run(ICACLS, [tokenFile, '/setowner', `*${USER}`])).exitCode, 0);
    await verifier.refresh();
    assert.equal(verifier.size, 1, 'the new file is not read');
    assert.equal((await verifier.verify(token)).ok, true);
    assert.match(
      problems.at(-1)![0],
      /token file .*tokens\.json is owned by S-1-5-21-.*tokens read before stay in force/s,
    );
    assert.equal(problems.at(-1)![1], true);
  });

  it('attack, conditional entry: a planted callback entry granting Everyone full control is refused, whatever its condition', async () => {
    const stateDir = join(dir, 'conditional');
    await guardStatePermissions({ stateDir }, options());
    const real = readFileSync(
      join(repoRoot, 'test/fixtures/icacls/conditional-everyone-full.sddl.txt'),
      'utf8',
    ).trim();
    await plant(stateDir, real);
    await assert.rejects(guardStatePermissions({ stateDir }, options()), (e: PowerPlanError) => {
      assert.deepEqual(e.details?.writers, ['WD']);
      return true;
    });
  });

  it('attack, nested parentheses: a write entry after a condition is seen, and a parenthesis in a quoted string hides nothing', async () => {
    const stateDir = join(dir, 'nested');
    await guardStatePermissions({ stateDir }, options());
    // Reading up to the first `)` would end the DACL inside the condition and miss Users' full control.
    await plant(stateDir, 'D:PAI(A;OICI;FA;;;SY)(XA;OICI;FA;;;BA;(Member_of {SID(BA)}))(A;OICI;FA;;;BU)');
    await assert.rejects(guardStatePermissions({ stateDir }, options()), (e: PowerPlanError) => {
      assert.deepEqual(e.details?.writers, ['BU']);
      return true;
    });
    await plant(stateDir, 'D:PAI(A;OICI;FA;;;SY)(XA;;FA;;;BA;(@User.Title == "a)b"))(A;OICI;0x1301bf;;;AU)');
    await assert.rejects(guardStatePermissions({ stateDir }, options()), (e: PowerPlanError) => {
      assert.deepEqual(e.details?.writers, ['AU']);
      return true;
    });
  });

  it('the owners are read by one PowerShell with the paths in the environment, never in the command text', async () => {
    const odd = join(dir, "it's $(whoami) [x]");
    mkdirSync(odd);
    const file = join(dir, 'owned-by-a-user.json');
    await writeFile(file, '{}');
    assert.equal((await run(ICACLS, [file, '/setowner', `*${USER}`])).exitCode, 0);
    const before = (await calls('powershell')).length;
    assert.deepEqual(await readOwners([odd, file], options()), ['BA', USER]);
    assert.equal((await calls('powershell')).length, before + 1, 'one PowerShell for both paths');
    const ps = (await calls('powershell')).at(-1)!;
    assert.ok(!ps.some((a) => a.includes(odd) || a.includes('whoami')), ps.join(' '));
    assert.deepEqual(ps.slice(0, 6), [
      '-NoLogo',
      '-NoProfile',
      '-NonInteractive',
      '-InputFormat',
      'None',
      '-Command',
    ]);
  });

  it('an owner missing from the answer of PowerShell is an error, never a pass', async () => {
    const oneLine: RunFn = async () => ({
      stdout: Buffer.from('O:BA\r\n'),
      stderr: Buffer.alloc(0),
      exitCode: 0,
    });
    await assert.rejects(
      readOwners([dir, join(dir, 'bom')], { ...options(), run: oneLine }),
      /cannot read the owner of .*: PowerShell printed 1 owner line\(s\) for 2 path\(s\) \(O:BA\)\. To fix: check that Windows PowerShell runs/,
    );
  });

  it('a /save file is read as UTF-16LE with or without a byte order mark, and with an empty name line', async () => {
    const target = join(dir, 'bom');
    mkdirSync(target);
    for (const [prefix, name] of [
      ['\uFEFF', 'bom'],
      ['', 'bom'],
      ['\uFEFF', ''],
    ] as const) {
      const fake: RunFn = async (_file, args) => {
        await writeFile(
          args[2]!,
          Buffer.from(`${prefix}${name}\r\nD:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)\r\n`, 'utf16le'),
        );
        return {
          stdout: Buffer.from('Successfully processed 1 files; Failed processing 0 files\r\n'),
          stderr: Buffer.alloc(0),
          exitCode: 0,
        };
      };
      assert.equal(
        await readDacl(target, { icacls: ICACLS, run: fake }),
        'D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)',
      );
    }
    const empty: RunFn = async (_file, args) => {
      await writeFile(args[2]!, Buffer.alloc(0));
      return { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 };
    };
    await assert.rejects(readDacl(target, { icacls: ICACLS, run: empty }), /icacls \/save wrote no DACL/);
  });
});
