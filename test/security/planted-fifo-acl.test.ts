/**
 * What a local user can plant without writing a file the service reads: a POSIX ACL entry on a
 * directory above the state directory or the token file (the mode shows `0775+`), a FIFO or a
 * symbolic link to one under a lock's, the token file's or its lock's name, and a token file that
 * does not exist yet in a sticky directory anyone can create it in. Each is refused with what to
 * do, and none of them hangs a request, a command or the server's stop.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aclWriters } from '../../src/lib/posix-acl.ts';
import { createToken } from '../../src/lib/tokens.ts';
import { call } from '../support/call.ts';
import { testDeps } from '../support/deps.ts';
import { runCli, startServer } from '../support/processes.ts';

const run = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
};
const isRoot = process.getuid?.() === 0;
const hasAcl = existsSync('/usr/bin/setfacl');
const skipAcl =
  (!hasAcl || !isRoot) && process.env.CI !== 'true' ? 'needs root and setfacl (package acl)' : false;
const skip = process.platform === 'win32' ? 'POSIX only' : false;
const sim = { POWERPLAN_BACKEND: 'simulated' };

describe('planted FIFOs, links and ACLs', { skip }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'powerplan-plant-'));
    chmodSync(dir, 0o755);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('attack, ACL on a parent: u:nobody:rwx on the directory above the state directory is refused until removed', {
    skip: skipAcl,
  }, async () => {
    const parent = join(dir, 'acl-parent');
    mkdirSync(parent, { mode: 0o755 });
    const stateDir = join(parent, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    run('setfacl', ['-m', 'u:nobody:rwx', parent]);
    const refused = await runCli(['active'], { ...sim, POWERPLAN_STATE_DIR: stateDir });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /has POSIX ACL entries that let other users write it \(user:65534:rwx\)/);
    assert.match(refused.stderr, new RegExp(`setfacl -b ${parent}`));
    // The mask bounds every named entry: with it at r-x the entry grants no write, and passes.
    run('setfacl', ['-m', 'm::rx', parent]);
    assert.equal((await runCli(['active'], { ...sim, POWERPLAN_STATE_DIR: stateDir })).code, 0);
    run('setfacl', ['-m', 'm::rwx', parent]);
    // The token file's directory the same way, then the printed fix.
    const tokenDir = join(dir, 'acl-tokens');
    mkdirSync(tokenDir, { mode: 0o755 });
    await createToken(join(tokenDir, 'tokens.json'), 'ops', ['read']);
    run('setfacl', ['-m', 'g:nogroup:rwx', tokenDir]);
    const own = join(dir, 'own-state');
    const t = await runCli(['active'], {
      ...sim,
      POWERPLAN_STATE_DIR: own,
      POWERPLAN_TOKEN_FILE: join(tokenDir, 'tokens.json'),
    });
    assert.equal(t.code, 2, t.stderr);
    assert.match(t.stderr, /token file .* has POSIX ACL entries .*group:65534:rwx/);
    run('setfacl', ['-b', parent]);
    assert.equal((await runCli(['active'], { ...sim, POWERPLAN_STATE_DIR: stateDir })).code, 0);
  });

  it('reads getfacl output: named entries with write through the mask count, trusted ids and defaults without write do not', () => {
    const text = [
      'user::rwx',
      'user:65534:rwx\t#effective:r-x',
      'user:1000:rwx',
      'group::r-x',
      'group:50:rw-',
      'mask::r-x',
      'other::r-x',
      'default:user:65534:rwx',
      'default:group:0:rwx',
      'default:mask::rwx',
    ].join('\n');
    assert.deepEqual(aclWriters(text, { uids: [0, 1000], gids: [0] }), ['default:user:65534:rwx']);
    assert.deepEqual(aclWriters(text.replace('mask::r-x', 'mask::rwx'), { uids: [0], gids: [0] }), [
      'user:65534:rwx',
      'user:1000:rwx',
      'group:50:rw-',
      'default:user:65534:rwx',
    ]);
  });

  it('attack, a lock that is a symbolic link to a FIFO, or a FIFO: a plan change is refused at once, not hung', async () => {
    const t = await testDeps();
    try {
      const fifo = join(dir, 'lock-fifo');
      run('mkfifo', [fifo]);
      symlinkSync(fifo, join(t.dir, 'plan.lock'));
      await assert.rejects(
        call(t.deps, 'set_power_plan', { plan: 'high-performance' }),
        /plan\.lock is a symbolic link/,
      );
      await rm(join(t.dir, 'plan.lock'));
      run('mkfifo', [join(t.dir, 'plan.lock')]);
      await assert.rejects(
        call(t.deps, 'set_power_plan', { plan: 'high-performance' }),
        /plan\.lock is not a regular file/,
      );
      await rm(join(t.dir, 'plan.lock'));
      const done = (await call(t.deps, 'set_power_plan', { plan: 'high-performance' })) as {
        changed: boolean;
      };
      assert.equal(done.changed, true);
    } finally {
      await t.cleanup();
    }
  });

  it('attack, a FIFO as the token file or as its lock: the start and token create are refused at once', async () => {
    const fifoDir = join(dir, 'fifo-tokens');
    mkdirSync(fifoDir, { mode: 0o700 });
    const tokenFile = join(fifoDir, 'tokens.json');
    run('mkfifo', [tokenFile]);
    const env = { ...sim, POWERPLAN_STATE_DIR: join(dir, 'fifo-state'), POWERPLAN_TOKEN_FILE: tokenFile };
    const start = await runCli(['serve', '--port', '0'], env, 15_000);
    assert.equal(start.code, 2, start.stderr);
    assert.match(start.stderr, /tokens\.json is not a regular file/);
    await rm(tokenFile);
    const fifo = join(dir, 'lock-of-tokens');
    run('mkfifo', [fifo]);
    symlinkSync(fifo, `${tokenFile}.lock`);
    const create = await runCli(['token', 'create', '--name', 'ops', '--scopes', 'read'], env, 15_000);
    assert.equal(create.code !== 0 && create.code !== null, true, create.stderr);
    assert.match(create.stderr, /tokens\.json\.lock is a symbolic link/);
    assert.equal(existsSync(tokenFile), false);
  });

  it('attack, a token file turned into a FIFO while serving: requests still answer and SIGTERM stops the server', async () => {
    const tokenDir = join(dir, 'live-tokens');
    mkdirSync(tokenDir, { mode: 0o700 });
    const tokenFile = join(tokenDir, 'tokens.json');
    const { token } = await createToken(tokenFile, 'ops', ['read']);
    const server = await startServer({
      ...sim,
      POWERPLAN_STATE_DIR: join(dir, 'live-state'),
      POWERPLAN_TOKEN_FILE: tokenFile,
    });
    try {
      await rm(tokenFile);
      run('mkfifo', [tokenFile]);
      const res = await fetch(`${server.url}/v1/plans/active`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(res.status, 200, 'the tokens read before stay in force');
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
  });

  it('attack, an absent token file in a sticky directory: refused at start, another user could create it first', async () => {
    const sticky = join(dir, 'sticky');
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    const r = await runCli(['active'], {
      ...sim,
      POWERPLAN_STATE_DIR: join(dir, 'sticky-state'),
      POWERPLAN_TOKEN_FILE: join(sticky, 'tokens.json'),
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /tokens\.json does not exist, and .*sticky is writable by other users \(mode 1777\)/,
    );
  });
});
