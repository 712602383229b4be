/**
 * Damaged state files: a file that exists but cannot be read or does not fit its schema is moved
 * aside as `<name>.corrupt-<UTC time>`, never overwritten and never deleted, so that the next
 * write cannot destroy what it held. Absent is not damaged: an absent file is simply empty. The
 * kept copies stay listed until someone has looked at them and removed them. Which files matter
 * and how (a journal whose loss leaves work owed) is the caller's to say: nothing here knows a
 * file's name.
 */
import { type BigIntStats, readdirSync, statSync } from 'node:fs';
import { link, lstat, rm } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { freezeDeep } from './frozen.ts';

export interface DamagedFile {
  /** The file that was damaged, e.g. `state.json`. */
  file: string;
  /** The kept copy, e.g. `state.json.corrupt-20260130T101500123Z`, in the same directory. */
  keptAs: string;
}

const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace('.', '');

/**
 * Moves `path` aside when it is still the file that was found damaged (`ino`); answers the kept
 * name, or undefined when the file changed or vanished meanwhile (a writer replaced it: nothing to do).
 */
export const keepAside = async (path: string, ino: bigint | number): Promise<string | undefined> => {
  const base = `${path}.corrupt-${stamp(new Date())}`;
  for (let n = 1; n < 100; n++) {
    const kept = n === 1 ? base : `${base}-${n}`;
    try {
      // A hard link never replaces an existing file: a kept copy is never overwritten.
      await link(path, kept);
      changedHere(dirname(path));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code === 'ENOENT') return undefined;
      throw e;
    }
    const keptIno = (await lstat(kept, { bigint: true })).ino;
    if (keptIno !== BigInt(ino)) {
      // The file was replaced between the read and the link: keep the new one where it is.
      await rm(kept, { force: true });
      changedHere(dirname(path));
      return undefined;
    }
    const now = await lstat(path, { bigint: true }).catch(() => undefined);
    if (now?.ino === keptIno) await rm(path, { force: true });
    changedHere(dirname(path));
    return basename(kept);
  }
  throw new Error(`Too many damaged copies of ${path}; remove the old ${basename(path)}.corrupt-* files.`);
};

/**
 * A directory's names, listed again only when the directory itself changed (its mtime, inode or
 * link count): a health check or a read on every request may ask, and a stat costs far less than a
 * listing of a directory that may hold many rotated log files. A directory changed in the last
 * two seconds is always listed: file times are coarser than the clock (a kernel tick), so a change
 * in the same tick as the listing would leave the same mtime.
 *
 * A directory someone watches (watchListing: the running service's watch of its state directory)
 * is not even looked at while no change was signalled since its last listing: its listing stands
 * until the watch or this process (keepAside) says the directory changed.
 */
const listings = new Map<string, { stamp: string; ino: bigint; settled: boolean; names: string[] }>();
const watched = new Map<string, { ino: bigint; fresh: boolean }>();
const namesIn = (dir: string): string[] => {
  const watch = watched.get(dir);
  const cached = listings.get(dir);
  if (watch?.fresh && cached?.ino === watch.ino) return cached.names;
  let stamp: string;
  let s: BigIntStats;
  try {
    s = statSync(dir, { bigint: true });
    stamp = `${s.ino}:${s.mtimeNs}:${s.nlink}`;
  } catch {
    listings.delete(dir);
    return [];
  }
  // A watch signals every change after this point (its events come on a later turn of the loop).
  if (watch) watch.fresh = true;
  if (cached?.settled && cached.stamp === stamp) return cached.names;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    listings.delete(dir);
    return [];
  }
  listings.set(dir, { stamp, ino: s.ino, settled: Date.now() - Number(s.mtimeMs) > 2000, names });
  return names;
};

/** What a watch of a directory tells the listing (see namesIn). */
export interface ListingWatch {
  /** Something in the directory changed: list it again at the next ask. */
  changed(): void;
  /** The watch ended: back to a stat per ask. */
  stop(): void;
}

/**
 * Lets the watcher of `dir` vouch for its listing. `ino` is the directory's inode taken before the
 * watch began: a directory replaced since (another inode) is not the one watched, and is looked at
 * on every ask again.
 */
export const watchListing = (dir: string, ino: bigint): ListingWatch => {
  const watch = { ino, fresh: false };
  watched.set(dir, watch);
  return {
    changed: () => {
      watch.fresh = false;
    },
    stop: () => {
      if (watched.get(dir) === watch) watched.delete(dir);
    },
  };
};

/** This process changed what `dir` holds: its listing is taken again, watched or not. */
const changedHere = (dir: string) => {
  for (const [watchedDir, watch] of watched) if (resolve(watchedDir) === resolve(dir)) watch.fresh = false;
};

/** What `damagedFiles` found in one listing, by `only`: the same (frozen) answer while it stands. */
const foundIn = new WeakMap<readonly string[], Map<string | undefined, readonly DamagedFile[]>>();

/**
 * The kept copies of damaged files in `dir` (optionally only those of one file name), by name;
 * deeply frozen, and the same array while the directory's listing is unchanged.
 */
export const damagedFiles = (dir: string, only?: string): readonly DamagedFile[] => {
  const names = namesIn(dir);
  let byOnly = foundIn.get(names);
  if (!byOnly) {
    byOnly = new Map();
    foundIn.set(names, byOnly);
  }
  const hit = byOnly.get(only);
  if (hit) return hit;
  const found: DamagedFile[] = [];
  for (const keptAs of names) {
    const file = /^(.+)\.corrupt-\d{8}T\d{9}Z(?:-\d+)?$/.exec(keptAs)?.[1];
    if (file !== undefined && (only === undefined || file === only)) found.push({ file, keptAs });
  }
  const answer = freezeDeep(found.sort((a, b) => a.keptAs.localeCompare(b.keptAs)));
  byOnly.set(only, answer);
  return answer;
};

/** `damagedFiles` for the directory of `path`, for the copies of that one file kept beside it. */
export const damagedBeside = (path: string): readonly DamagedFile[] =>
  damagedFiles(dirname(path), basename(path));
