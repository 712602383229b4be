/**
 * The command wrapper when the system cannot start a command: out of file handles (EMFILE, made
 * real here by a child process that uses up its own limit), nothing ran, so it is started once
 * more after a pause; a command that does not exist is not retried.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CommandError, runCommand, START_RETRY_MS } from '../../src/lib/run-command.ts';
import { repoRoot } from '../support/deps.ts';

const linux = process.platform === 'linux';

/**
 * Runs `runCommand('/bin/true')` in a child whose every file handle is taken; `freeAfterMs`
 * gives some back that long after the first attempt. Prints what it saw as JSON.
 */
const exhausted = async (freeAfterMs: number | null) => {
  const script = `
    import { openSync, closeSync } from 'node:fs';
    import { runCommand } from ${JSON.stringify(join(repoRoot, 'src/lib/run-command.ts'))};
    const held = [];
    try { for (;;) held.push(openSync('/dev/null', 'r')); } catch {}
    const started = performance.now();
    if (${freeAfterMs} !== null) setTimeout(() => held.splice(0, 32).forEach((fd) => closeSync(fd)), ${freeAfterMs ?? 0});
    try {
      const r = await runCommand('/bin/true', []);
      held.forEach((fd) => closeSync(fd));
      console.log(JSON.stringify({ exitCode: r.exitCode, ms: performance.now() - started }));
    } catch (e) {
      held.forEach((fd) => closeSync(fd));
      console.log(JSON.stringify({ name: e.name, message: e.message, notStarted: e.notStarted, ms: performance.now() - started }));
    }`;
  const { stdout } = await promisify(execFile)(
    '/bin/sh',
    ['-c', 'ulimit -n 256 && exec "$0" --import tsx --input-type=module -e "$1"', process.execPath, script],
    { cwd: repoRoot, timeout: 30_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    exitCode?: number;
    name?: string;
    message?: string;
    notStarted?: string;
    ms: number;
  };
};

describe('runCommand when a command cannot be started', {
  skip: !linux && 'needs ulimit and /bin/true',
}, () => {
  it('out of file handles, then some freed: the second start runs the command', async () => {
    const r = await exhausted(50);
    assert.equal(r.exitCode, 0, JSON.stringify(r));
    assert.ok(r.ms >= START_RETRY_MS - 5, `answered after ${r.ms} ms, before the pause`);
  });

  it('still out of file handles: a CommandError that says it could not be started, after one pause', async () => {
    const r = await exhausted(null);
    assert.equal(r.name, 'CommandError', JSON.stringify(r));
    assert.equal(r.notStarted, 'EMFILE');
    assert.match(r.message!, /^\/bin\/true: could not be started \(EMFILE\)$/);
    assert.ok(r.ms >= START_RETRY_MS - 5, `failed after ${r.ms} ms, without the second try`);
  });

  it('a command that does not exist is not found at once, not retried', async () => {
    const started = performance.now();
    const e = await runCommand('/nonexistent/powercfg', []).catch((x: unknown) => x);
    assert.ok(e instanceof CommandError);
    assert.equal(e.notFound, true);
    assert.equal(e.notStarted, 'ENOENT');
    assert.match(e.message, /command not found/);
    assert.ok(performance.now() - started < START_RETRY_MS, 'a missing command was tried twice');
  });

  it('a command that ran and failed is an answer with its exit code, not an error', async () => {
    const r = await runCommand('/bin/sh', ['-c', 'echo no >&2; exit 3']);
    assert.equal(r.exitCode, 3);
    assert.equal(r.stderr.toString(), 'no\n');
  });
});
