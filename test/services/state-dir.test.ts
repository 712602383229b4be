/**
 * One state directory for every start point on Linux: root and the user who owns
 * /var/lib/powerplan (the packaged service's user, as `runuser -u powerplan -- powerplan active`)
 * use the service's /var/lib/powerplan, as the unit and the image do; any other user has
 * ~/.local/state/powerplan (or XDG_STATE_HOME), and POWERPLAN_STATE_DIR wins over all of them.
 */
import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { defaultStateDir, loadConfig, SYSTEM_STATE_DIR } from '../../src/config.ts';

const linux = process.platform !== 'win32';
const owned = (owner: number | undefined) => (dir: string) => (dir === SYSTEM_STATE_DIR ? owner : undefined);

describe('the default state directory', { skip: linux ? false : 'the Linux rules' }, () => {
  it('root: /var/lib/powerplan, whoever owns it', () => {
    assert.equal(defaultStateDir({}, { uid: 0, ownerOf: owned(undefined) }), '/var/lib/powerplan');
    assert.equal(defaultStateDir({}, { uid: 0, ownerOf: owned(998) }), '/var/lib/powerplan');
  });

  it("the user who owns /var/lib/powerplan (the service's user): the service's directory", () => {
    assert.equal(defaultStateDir({}, { uid: 998, ownerOf: owned(998) }), '/var/lib/powerplan');
    // Even with XDG_STATE_HOME set (runuser keeps some of the caller's environment).
    assert.equal(
      defaultStateDir({ XDG_STATE_HOME: '/tmp/x' }, { uid: 998, ownerOf: owned(998) }),
      '/var/lib/powerplan',
    );
  });

  it("any other user: their own state directory, never the service user's", () => {
    const own = join(homedir(), '.local', 'state', 'powerplan');
    assert.equal(defaultStateDir({}, { uid: 1000, ownerOf: owned(998) }), own);
    assert.equal(defaultStateDir({}, { uid: 1000, ownerOf: owned(undefined) }), own);
    assert.equal(defaultStateDir({}, { uid: undefined, ownerOf: owned(undefined) }), own);
    assert.equal(
      defaultStateDir({ XDG_STATE_HOME: '/home/u/.state' }, { uid: 1000, ownerOf: owned(998) }),
      '/home/u/.state/powerplan',
    );
  });

  it('POWERPLAN_STATE_DIR and --state-dir win', () => {
    assert.equal(loadConfig({ POWERPLAN_STATE_DIR: '/srv/pp' }).stateDir, '/srv/pp');
    assert.equal(
      loadConfig({ POWERPLAN_STATE_DIR: '/srv/pp' }, { stateDir: '/srv/flag' }).stateDir,
      '/srv/flag',
    );
  });

  it('this process: the rule applied to the real owner of /var/lib/powerplan', () => {
    const dir = loadConfig({}).stateDir;
    if (process.getuid?.() === 0) assert.equal(dir, SYSTEM_STATE_DIR);
    else
      assert.ok(
        dir === SYSTEM_STATE_DIR || dir.endsWith(join('state', 'powerplan')) || dir.endsWith('powerplan'),
        dir,
      );
  });
});
