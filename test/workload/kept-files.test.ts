import assert from 'node:assert/strict';
import { mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createKeptFiles } from '../../src/platform/linux/kept-files.ts';

/**
 * Descriptors this process has open on files in `dir` (not all of them: the runtime opens and
 * closes its own meanwhile).
 */
const openIn = async (dir: string) => {
  let n = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(`${dir}/`)) n++;
  }
  return n;
};

describe('files read through kept descriptors', () => {
  it('reads a file anew at every read, remembers a missing one until closeAll, and keeps at most its limit open', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-kept-'));
    const files = createKeptFiles(2);
    try {
      const path = (n: number) => join(dir, `f${n}`);
      for (const n of [0, 1, 2]) await writeFile(path(n), `${n}\n`);
      assert.deepEqual(
        [0, 1, 2].map((n) => files.read(path(n))),
        ['0\n', '1\n', '2\n'],
      );
      // Two kept; the third is opened and closed for each read.
      assert.equal(await openIn(dir), 2);
      // Rewritten in place (as the kernel renders an attribute anew): every read sees the new text.
      for (const n of [0, 1, 2]) await writeFile(path(n), `${n * 10}\n`);
      assert.deepEqual(
        [0, 1, 2].map((n) => files.read(path(n))),
        ['0\n', '10\n', '20\n'],
      );
      assert.equal(files.read(path(9)), null);
      await writeFile(path(9), 'late\n');
      // A file missing at the first read stays missing (sysfs attributes do not come and go)...
      assert.equal(files.read(path(9)), null);
      files.closeAll();
      assert.equal(await openIn(dir), 0);
      // ...until the files read change.
      assert.equal(files.read(path(9)), 'late\n');
    } finally {
      files.closeAll();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads a file longer than its buffer whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-kept-'));
    const files = createKeptFiles(4);
    try {
      const text = `${'x'.repeat(10_000)}\n`;
      await writeFile(join(dir, 'long'), text);
      assert.equal(files.read(join(dir, 'long')), text);
      assert.equal(files.read(join(dir, 'long')), text);
    } finally {
      files.closeAll();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
