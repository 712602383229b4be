/**
 * The SDDL reader and the verdict of the Windows ACL check on real security descriptors
 * (test/fixtures/icacls/*.sddl.txt, each with a .source.md naming where it came from), read as
 * captured: good ones pass, and the attacks (a user as owner, a conditional entry granting write,
 * an entry hidden behind a condition's parentheses, entries that cannot be read) are refused.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type Ace, isUnparsed, parseSddl } from '../../src/lib/sddl.ts';
import { unsafeAccess, writersBeyondAdmins } from '../../src/lib/windows-acl.ts';
import { repoRoot } from '../support/deps.ts';

const dir = join(repoRoot, 'test/fixtures/icacls');
const fixture = (name: string) => readFileSync(join(dir, `${name}.sddl.txt`), 'utf8').trim();
const TRUSTED_INSTALLER = 'S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464';

describe('SDDL of real security descriptors', () => {
  it('every fixture says where it came from', () => {
    const names = readdirSync(dir).filter((f) => f.endsWith('.sddl.txt'));
    assert.ok(names.length >= 8, names.join(', '));
    for (const f of names) assert.ok(existsSync(join(dir, f.replace(/\.txt$/, '.source.md'))), f);
  });

  it('reads every entry of every fixture, a condition with its own parentheses included', () => {
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.sddl.txt'))) {
      const sd = parseSddl(fixture(f.replace('.sddl.txt', '')));
      assert.ok(sd.dacl, f);
      assert.equal(sd.trailing, undefined, f);
      assert.ok(sd.dacl.entries.length > 0, f);
      assert.ok(!sd.dacl.entries.some(isUnparsed), f);
    }
    const apps = parseSddl(fixture('windowsapps-get-acl'));
    assert.equal(apps.owner, TRUSTED_INSTALLER);
    assert.equal(apps.group, TRUSTED_INSTALLER);
    assert.equal(apps.dacl?.flags, 'PAI');
    const entries = apps.dacl!.entries as Ace[];
    assert.equal(entries.length, 8);
    assert.deepEqual(entries[5], {
      type: 'XA',
      flags: [],
      rights: '0x1200a9',
      objectGuid: '',
      inheritObjectGuid: '',
      sid: 'BU',
      condition: '(Exists WIN://SYSAPPID)',
    });
    // The two entries after the condition.
    assert.equal(entries[6]!.sid, TRUSTED_INSTALLER);
    assert.equal(entries[6]!.rights, 'FA');
    assert.deepEqual(entries[6]!.flags, ['OI', 'CI']);
    assert.equal(entries[7]!.sid.startsWith('S-1-15-3-1024-'), true);
  });

  it('good: SYSTEM and Administrators only, owned by Administrators, others at most reading', () => {
    assert.deepEqual(unsafeAccess(fixture('programdata-ssh')), { writers: [] });
    assert.deepEqual(unsafeAccess(fixture('administrators-authorized-keys')), { writers: [] });
    // The ProgramData folder's own owner is Administrators; its inherited DACL lets Users create files.
    assert.deepEqual(unsafeAccess(fixture('programdata-subfolder')), { writers: ['BU'] });
  });

  it('attack, owner: a clean DACL on a folder a user owns is refused for the owner alone', () => {
    assert.deepEqual(unsafeAccess(fixture('user-owned-folder')), {
      owner: 'S-1-5-21-758131494-606461608-3556270690-2176',
      writers: [],
    });
    assert.deepEqual(unsafeAccess(fixture('sv-SE-user-created-folder')), {
      owner: 'S-1-5-21-4132158795-2060570990-1823972835-1001',
      writers: ['AU'],
    });
    // A descriptor that names no owner (an `icacls /save` line) is not taken for a trusted one.
    assert.equal(unsafeAccess('D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)').owner, '(no owner)');
  });

  it('attack, conditional entries: they count as writers whatever their condition', () => {
    assert.deepEqual(writersBeyondAdmins(fixture('conditional-everyone-full')), ['WD']);
    // WindowsApps: Users' conditional read counts; TrustedInstaller writes; the rest only read.
    assert.deepEqual(writersBeyondAdmins(fixture('windowsapps-default')), [TRUSTED_INSTALLER, 'BU']);
    assert.deepEqual(writersBeyondAdmins('D:P(A;;FA;;;SY)(XD;;FA;;;BU;(Member_of {SID(BU)}))'), ['BU']);
    assert.deepEqual(writersBeyondAdmins('D:P(A;;FA;;;SY)(ZA;;FA;;;AU;(@User.Age == 1))'), ['AU']);
    // A conditional entry for SYSTEM or Administrators grants nothing they do not have.
    assert.deepEqual(writersBeyondAdmins('D:P(A;;FA;;;SY)(XA;;FA;;;BA;(Member_of {SID(BA)}))'), []);
  });

  it('attack, nested parentheses: entries after a condition are read, in a real capture and in a planted DACL', () => {
    const apps = writersBeyondAdmins(fixture('windowsapps-get-acl'));
    assert.deepEqual(apps, ['BU', TRUSTED_INSTALLER]);
    assert.deepEqual(
      writersBeyondAdmins('D:PAI(A;OICI;FA;;;SY)(XA;OICI;FA;;;BA;(Member_of {SID(BA)}))(A;OICI;FA;;;BU)'),
      ['BU'],
    );
    // Deeper nesting, and parentheses inside a quoted string.
    assert.deepEqual(
      writersBeyondAdmins(
        'D:P(XA;;FA;;;SY;((Member_of {SID(ED)}) || (Member_of_any {SID(BA), SID(SY)})))(XA;;FA;;;BA;(@User.Title == ")(("))(A;;0x1301bf;;;AU)',
      ),
      ['AU'],
    );
  });

  it('fail closed: an entry, a right or a shape that cannot be read counts as a writer', () => {
    // Never closed: the rest of the text is one unreadable entry.
    const open = writersBeyondAdmins('D:PAI(A;OICI;FA;;;SY)(XA;OICI;FA;;;WD;(Member_of {SID(BA)})');
    assert.equal(open.length, 1);
    assert.match(open[0]!, /^unreadable entry \(XA;OICI;FA;;;WD;/);
    // Text between or after entries, an unknown type, an unknown right, a malformed field.
    assert.match(writersBeyondAdmins('D:P(A;;FA;;;SY)junk(A;;FA;;;BU)')[0]!, /^unreadable entry junk/);
    assert.deepEqual(writersBeyondAdmins('D:P(A;;FA;;;SY)(ZZ;;FA;;;AU)'), ['AU']);
    assert.deepEqual(writersBeyondAdmins('D:P(A;;FA;;;SY)(A;;QQ;;;AU)'), ['AU']);
    assert.match(
      writersBeyondAdmins('D:P(A;;FA;;;SY)(A;;FA;;;SY;extra)')[0]!,
      /^unreadable entry \(A;;FA;;;SY;extra\)/,
    );
    assert.match(writersBeyondAdmins('D:P(A;;FA;;;SY)(A;;FA;;;not a sid)')[0]!, /^unreadable entry/);
    // A null DACL, or none at all, lets everyone in; an empty one lets no one.
    assert.deepEqual(writersBeyondAdmins('O:BAD:NO_ACCESS_CONTROL'), ['(no DACL: everyone)']);
    assert.deepEqual(writersBeyondAdmins('O:BAG:SY'), ['(no DACL: everyone)']);
    assert.deepEqual(writersBeyondAdmins('O:BAD:P'), []);
    // Plain deny entries grant nothing; an audit part after the DACL is not an entry of it.
    assert.deepEqual(writersBeyondAdmins('D:P(D;;FA;;;BU)(A;;FA;;;SY)S:AI(AU;SAFA;FA;;;WD)'), []);
  });

  it('attack, repeated parts: a second owner, group, DACL or SACL is never chosen between', () => {
    // The finding: a second D: replaced the first, so the writable DACL went unseen.
    const planted = 'O:BAD:P(A;;FA;;;BU)D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)';
    const sd = parseSddl(planted);
    assert.equal(sd.trailing, 'D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)');
    assert.deepEqual(
      sd.dacl?.entries.map((e) => (isUnparsed(e) ? e.unparsed : e.sid)),
      ['BU'],
    );
    const verdict = unsafeAccess(planted);
    assert.ok(verdict.writers.includes('BU'));
    assert.ok(verdict.writers.some((w) => w.startsWith('unreadable entry D:P(')));
    // Clean DACLs, each with a repeated part: every one is refused, whichever copy comes first.
    const clean = 'D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)';
    for (const text of [
      `O:BUO:BA${clean}`,
      `O:BA${clean}O:BU`,
      `O:BAG:SYG:BU${clean}`,
      `O:BA${clean}S:AI(AU;SAFA;FA;;;WD)S:P`,
      `O:BA${clean}D:P(A;OICI;FA;;;SY)`,
    ]) {
      const v = unsafeAccess(text);
      assert.ok(v.owner !== undefined || v.writers.length > 0, text);
    }
    assert.deepEqual(unsafeAccess(`O:BAG:SY${clean}S:AI(AU;SAFA;FA;;;WD)`), { writers: [] });
  });
});
