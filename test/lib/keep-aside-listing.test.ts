/**
 * damagedFiles lists a state directory again only when it changed: a kept copy that appears later
 * is seen at once, whether the directory had settled (cached listing) or had just changed.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { damagedFiles } from '../../src/lib/keep-aside.ts';

describe('damaged-file listing', () => {
  it('sees a kept copy added after a cached listing of a settled directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-listing-'));
    try {
      await writeFile(join(dir, 'benchmarks.json'), '[]');
      const old = new Date(Date.now() - 60_000);
      await utimes(dir, old, old);
      assert.deepEqual(damagedFiles(dir), []);
      assert.deepEqual(damagedFiles(dir), [], 'the cached listing answers the same');
      await writeFile(join(dir, 'restore-journal.json.corrupt-20261130T101010123Z'), 'x');
      const found = damagedFiles(dir);
      assert.equal(found.length, 1);
      assert.equal(found[0]!.file, 'restore-journal.json');
      assert.equal(found[0]!.keptAs, 'restore-journal.json.corrupt-20261130T101010123Z');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a directory changed just now is listed every time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-listing-'));
    try {
      assert.deepEqual(damagedFiles(dir), []);
      // Same tick as the listing: the directory's mtime may not move, the fresh listing still sees it.
      await writeFile(join(dir, 'benchmarks.json.corrupt-20261130T101010123Z'), 'x');
      assert.deepEqual(
        damagedFiles(dir).map((d) => d.file),
        ['benchmarks.json'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
