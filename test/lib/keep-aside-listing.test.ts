/**
 * damagedFiles lists a state directory again only when it changed: a kept copy that appears later
 * is seen at once, whether the directory had settled (cached listing) or had just changed. A watched
 * directory (the running service's state directory) is not looked at while its watch signals no
 * change, and a change by another process is seen after the watch's event, by this one at once.
 */
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { damagedFiles, watchListing } from '../../src/lib/keep-aside.ts';
import { Store } from '../../src/lib/store.ts';

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

describe('damaged-file listing of a watched directory', () => {
  const kept = 'benchmarks.json.corrupt-20261130T101010123Z';

  it('stands while the watch signals no change, and is taken again once it does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-listing-'));
    const watch = watchListing(dir, (await lstat(dir, { bigint: true })).ino);
    try {
      assert.deepEqual(damagedFiles(dir), []);
      await writeFile(join(dir, kept), 'x');
      assert.deepEqual(damagedFiles(dir), [], 'no change signalled: the listing stands, unlooked at');
      watch.changed();
      assert.deepEqual(
        damagedFiles(dir).map((d) => d.keptAs),
        [kept],
      );
      await rm(join(dir, kept));
      watch.stop();
      assert.deepEqual(damagedFiles(dir), [], 'the watch ended: looked at on every ask again');
    } finally {
      watch.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  /** Asks until `ask` holds (the watch's event comes on a later turn of the loop), at most 5 s. */
  const eventually = async (ask: () => boolean) => {
    for (let i = 0; i < 250 && !ask(); i++) await new Promise((r) => setTimeout(r, 20));
    return ask();
  };

  it("a running service's store sees a kept copy made by another process, and its own at once", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'powerplan-listing-'));
    const store = new Store(dir);
    const unwatch = store.watch(['desired.json'], () => undefined);
    try {
      assert.ok(unwatch, 'the state directory can be watched here');
      assert.deepEqual(store.damaged(), []);
      // Another process (a CLI run) moved a damaged file aside.
      await writeFile(join(dir, kept), 'x');
      assert.ok(await eventually(() => store.damaged().length === 1), 'seen after the watch event');
      // This process keeps one aside: seen by the very next ask, without waiting for the event.
      await writeFile(join(dir, 'desired.json'), '{not json');
      assert.equal(await store.read('desired.json', z.object({})), undefined);
      assert.deepEqual(
        store.damaged().map((d) => d.file),
        ['benchmarks.json', 'desired.json'],
      );
      await rm(join(dir, kept));
      assert.ok(await eventually(() => store.damaged().length === 1), 'a removed copy goes too');
    } finally {
      unwatch?.();
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Windows keeps a watched directory while the watch holds it open (delete pending): it cannot
  // be made again under the same name until the watch lets go, so there is nothing to mistake.
  const heldWhileWatched =
    process.platform === 'win32' && 'Windows keeps a watched directory until the watch ends';
  it('the watched state directory removed and made again: a kept copy in the new one is seen', {
    skip: heldWhileWatched,
  }, async () => {
    const parent = await mkdtemp(join(tmpdir(), 'powerplan-listing-'));
    const dir = join(parent, 'state');
    const store = new Store(dir);
    const unwatch = store.watch(['desired.json'], () => undefined);
    try {
      assert.deepEqual(store.damaged(), []);
      await rm(dir, { recursive: true });
      await mkdir(dir); // ext4 may hand the new directory the old one's inode number
      // The watch's last events (the directory's own removal) have come and gone.
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(store.damaged(), []);
      await writeFile(join(dir, kept), 'x');
      assert.equal(store.damaged().length, 1, 'the new directory is looked at: no watch vouches for it');
    } finally {
      unwatch?.();
      await rm(parent, { recursive: true, force: true });
    }
  });
});
