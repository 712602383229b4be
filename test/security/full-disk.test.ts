/**
 * A full disk under the state directory (a 1 MiB tmpfs, filled): a refused plan change leaves no
 * temporary file behind (before: 82 empty `plan.lock.<pid>.<rand>.tmp` after two), and a first
 * start prints one line saying the disk is full and what to do, exit code 2 (before: a stack trace
 * and `admin.token.*.tmp` left). Needs root to mount (skipped otherwise, failed in CI).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../support/processes.ts';

const isRoot = process.getuid?.() === 0;
const skip =
  (!isRoot || process.platform !== 'linux') && process.env.CI !== 'true'
    ? 'needs root on Linux (mount)'
    : false;

/** Every name under `dir`, recursively. */
const allNames = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((n) => String(n));

describe('a full disk', { skip }, () => {
  let mnt: string;
  const filler = () => join(mnt, 'filler');
  const fill = () => {
    try {
      writeFileSync(filler(), Buffer.alloc(2 * 1024 * 1024));
    } catch (e) {
      assert.equal((e as NodeJS.ErrnoException).code, 'ENOSPC');
    }
  };
  before(() => {
    mnt = mkdtempSync(join(tmpdir(), 'powerplan-full-'));
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', mnt], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
  });
  after(() => {
    spawnSync('umount', [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  });

  it('attack, a refused change on a full disk: nothing left behind, and the next change works once there is room', async () => {
    const stateDir = join(mnt, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    const env = { POWERPLAN_BACKEND: 'simulated', POWERPLAN_STATE_DIR: stateDir };
    assert.equal((await runCli(['set', 'balanced'], env)).code, 0);
    const before = allNames(mnt).sort();
    fill();
    for (const plan of ['high-performance', 'power-saver']) {
      const r = await runCli(['set', plan], env);
      assert.notEqual(r.code, 0, r.stdout);
      // The service's own log lines are JSON; what the user reads is one line.
      const said = r.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('{'));
      assert.equal(said.length, 1, r.stderr);
      assert.match(said[0]!, /^powerplan: the disk is full \(ENOSPC/);
    }
    const names = allNames(mnt);
    assert.deepEqual(
      names.filter((n) => n.endsWith('.tmp')),
      [],
    );
    assert.deepEqual(names.filter((n) => n !== 'filler').sort(), before);
    rmSync(filler());
    assert.equal((await runCli(['set', 'high-performance'], env)).code, 0);
  });

  it('attack, a first start on a full disk: one line, exit code 2, nothing left behind', async () => {
    fill();
    const stateDir = join(mnt, 'fresh');
    const r = await runCli(['serve', '--port', '0'], {
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_STATE_DIR: stateDir,
    });
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('{'));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^powerplan: the disk is full \(ENOSPC.*\): free space on the disk of .*fresh/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    assert.deepEqual(
      allNames(mnt).filter((n) => n.endsWith('.tmp')),
      [],
    );
    rmSync(filler());
  });
});
