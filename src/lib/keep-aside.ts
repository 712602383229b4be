/**
 * Damaged state files: a file that exists but cannot be read or does not fit its schema is moved
 * aside as `<name>.corrupt-<UTC time>`, never overwritten and never deleted, so that the next
 * write cannot destroy what it held (a pending restore, benchmark results, tokens). Absent is not
 * damaged: an absent file is simply empty. The kept copies are what /healthz and /metrics report
 * until an operator has looked at them and removed them.
 */
import { type BigIntStats, readdirSync, statSync } from 'node:fs';
import { link, lstat, rm } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';

/** Files whose loss may leave a restore owed: their damage is warned about on every plan read. */
export const JOURNAL_FILES: ReadonlySet<string> = new Set([
  'restore-journal.json',
  'holds.json',
  'compare-journal.json',
]);

export interface DamagedFile {
  /** The file that was damaged, e.g. `holds.json`. */
  file: string;
  /** The kept copy, e.g. `holds.json.corrupt-20260130T101500123Z`, in the same directory. */
  keptAs: string;
  /** True for a restore journal: a restore may be pending; the kept copy names the plan. */
  journal: boolean;
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
      return undefined;
    }
    const now = await lstat(path, { bigint: true }).catch(() => undefined);
    if (now?.ino === keptIno) await rm(path, { force: true });
    return basename(kept);
  }
  throw new Error(`Too many damaged copies of ${path}; remove the old ${basename(path)}.corrupt-* files.`);
};

/**
 * A directory's names, listed again only when the directory itself changed (its mtime, inode or
 * link count): /healthz and every read of the active plan ask, and a stat costs far less than a
 * listing of a state directory that may hold rotated audit files. A directory changed in the last
 * two seconds is always listed: file times are coarser than the clock (a kernel tick), so a change
 * in the same tick as the listing would leave the same mtime.
 */
const listings = new Map<string, { stamp: string; names: string[] }>();
const namesIn = (dir: string): string[] => {
  let stamp: string;
  let s: BigIntStats;
  try {
    s = statSync(dir, { bigint: true });
    stamp = `${s.ino}:${s.mtimeNs}:${s.nlink}`;
  } catch {
    listings.delete(dir);
    return [];
  }
  const cached = listings.get(dir);
  if (cached?.stamp === stamp) return cached.names;
  const settled = Date.now() - Number(s.mtimeMs) > 2000;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  if (settled) listings.set(dir, { stamp, names });
  else listings.delete(dir);
  return names;
};

/** The kept copies of damaged files in `dir` (optionally only those of one file name). */
export const damagedFiles = (dir: string, only?: string): DamagedFile[] => {
  return namesIn(dir)
    .map((keptAs) => ({ keptAs, m: /^(.+)\.corrupt-\d{8}T\d{9}Z(?:-\d+)?$/.exec(keptAs) }))
    .filter(({ m }) => m && (only === undefined || m[1] === only))
    .map(({ keptAs, m }) => ({ file: m![1]!, keptAs, journal: JOURNAL_FILES.has(m![1]!) }))
    .sort((a, b) => a.keptAs.localeCompare(b.keptAs));
};

/** `damagedFiles` for the directory of `path`, for files kept beside it (the token file). */
export const damagedBeside = (path: string): DamagedFile[] => damagedFiles(dirname(path), basename(path));

export interface StateHealth {
  status: 'ok' | 'degraded';
  damaged: DamagedFile[];
}

/** /healthz: degraded while a kept copy of a damaged state file (or token file) is present. */
export const stateHealth = (stateDir: string, tokenFile: string | undefined): StateHealth => {
  const besideTokens = tokenFile && resolve(dirname(tokenFile)) !== resolve(stateDir);
  const damaged = [...damagedFiles(stateDir), ...(besideTokens ? damagedBeside(tokenFile) : [])];
  return { status: damaged.length ? 'degraded' : 'ok', damaged };
};

/** What get_active_power_plan and the page say while a damaged restore journal is kept aside. */
export const journalWarnings = (damaged: readonly DamagedFile[]): string[] =>
  damaged
    .filter((d) => d.journal)
    .map(
      (d) =>
        `The restore journal ${d.file} was damaged and kept aside as ${d.keptAs} in the state directory: a restore may be pending. ` +
        'Its restorePlanId names the plan that was in force before; set that plan if it is not in force, then remove the kept copy.',
    );
