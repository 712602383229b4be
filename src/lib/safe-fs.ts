/**
 * The files the service trusts on a POSIX system: the state directory and its parents, the state
 * files in it, the token file. Another local user must not be able to plant, replace or redirect
 * any of them, so:
 *
 * - the state directory and every directory above it belong to this user or root and are not
 *   writable by others (a sticky directory such as /tmp is accepted above an existing state
 *   directory, whose name another user then cannot take away; it is refused as the parent of a
 *   missing one, which another user could create first); a symbolic link on the way must belong
 *   to this user or root too, and the directories it leads to are checked the same way; a POSIX
 *   ACL entry that lets another user write one of them is refused too (posix-acl.ts);
 * - a state file is opened with O_NOFOLLOW (a planted symbolic link is refused, never followed)
 *   and O_NONBLOCK (a planted FIFO never blocks the open) and checked on the open handle: a
 *   regular file of this user or root, not writable by others.
 *
 * A refusal is a PowerPlanError with `details.unsafePermissions`, which the CLI turns into exit
 * code 2, and its message names the command that fixes it. On Windows, where ownership and modes
 * say nothing, the ACL check in windows-acl.ts does this job.
 */
import { accessSync, constants, lstatSync, mkdirSync, readlinkSync, type Stats, statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, rm } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';
import { PowerPlanError } from '../domain/errors.ts';
import { aclProblem } from './posix-acl.ts';

export const posix = process.platform !== 'win32';

/** O_NOFOLLOW where the platform has it (not on Windows, where the ACL check covers planting). */
export const O_NOFOLLOW: number = constants.O_NOFOLLOW ?? 0;
/**
 * O_NONBLOCK where the platform has it: opening a FIFO (or a device) planted under a trusted name
 * then answers at once instead of waiting for a writer that never comes; the handle is checked to
 * be a regular file before anything is read. No effect on regular files.
 */
export const O_NONBLOCK: number = posix ? (constants.O_NONBLOCK ?? 0) : 0;

const uid = (): number | undefined => process.getuid?.();
const gid = (): number | undefined => process.getgid?.();
const trustedOwner = (owner: number) => owner === uid() || owner === 0;
const modeOf = (s: Stats) => (s.mode & 0o7777).toString(8).padStart(4, '0');

export const unsafe = (message: string, path: string): PowerPlanError =>
  new PowerPlanError('forbidden', `${message} (see docs/SECURITY.md).`, { unsafePermissions: true, path });

/** Why a directory on the way to the state directory is unsafe, or undefined. */
const unsafeDirectory = (path: string, s: Stats, { last }: { last: boolean }): string | undefined => {
  if (!s.isDirectory()) return 'is not a directory';
  if (!trustedOwner(s.uid)) return `belongs to another user (uid ${s.uid})`;
  const sticky = (s.mode & 0o1000) !== 0;
  // Above an existing state directory a sticky directory is fine: others cannot rename what is ours.
  if (sticky && !last) return undefined;
  if (s.mode & 0o002) return `is writable by every user (mode ${modeOf(s)})`;
  if (s.mode & 0o020 && s.gid !== 0 && s.gid !== gid())
    return `is writable by group ${s.gid} (mode ${modeOf(s)})`;
  // Group bits with write under a trusted group: they may be the mask of an ACL (posix-acl.ts).
  if (s.mode & 0o020) return aclProblem(path, { uids: [0, uid() ?? 0], gids: [0, gid() ?? 0] });
  return undefined;
};

const fixFor = (path: string, why: string): string =>
  why.startsWith('has POSIX ACL')
    ? `setfacl -b ${path} (removes its ACL entries)`
    : why.startsWith('is group-writable')
      ? `chmod g-w ${path}`
      : why.startsWith('belongs')
        ? `mv ${path} ${path}.untrusted && install -d -m 0700 ${path} (or choose another POWERPLAN_STATE_DIR)`
        : why.startsWith('is writable')
          ? `chmod go-w ${path}`
          : `choose another POWERPLAN_STATE_DIR`;

/** Every directory from the root down to `path` (itself included). */
const chain = (path: string): string[] => {
  const out: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    out.unshift(p);
    if (dirname(p) === p) return out;
  }
};

/**
 * Resolves `path` component by component, refusing a symbolic link that belongs to another user
 * (it could be pointed anywhere at any time); answers the real path.
 */
const resolveTrusted = (path: string, what: string, depth = 0): string => {
  const { root } = parse(path);
  const parts = path.slice(root.length).split(sep).filter(Boolean);
  let real = root;
  for (const [i, part] of parts.entries()) {
    const next = join(real, part);
    const s = lstatSync(next, { throwIfNoEntry: false });
    // Missing from here on: what will be created is checked once it exists.
    if (!s) return join(real, ...parts.slice(i));
    if (!s.isSymbolicLink()) {
      real = next;
      continue;
    }
    if (!trustedOwner(s.uid) || depth > 16)
      throw unsafe(
        `The ${what} ${path} leads through the symbolic link ${next}, which belongs to another user (uid ${s.uid}): ` +
          'it could point anywhere. Remove it or choose another path',
        path,
      );
    const target = readlinkSync(next);
    real = resolveTrusted(isAbsolute(target) ? target : join(real, target), what, depth + 1);
  }
  return real;
};

/** Checks the directories from the root down to an existing `dir`; `dir` itself as the last one. */
const checkChain = (dir: string, what: string, shown: string): void => {
  for (const d of chain(dir)) {
    const last = d === dir;
    const why = unsafeDirectory(d, statSync(d), { last });
    if (!why) continue;
    throw unsafe(
      `The ${what} ${shown}${d === shown ? '' : ` (at ${d})`} is not safe: ${last ? 'it' : `the directory ${d}`} ${why}, ` +
        `so another local user could plant or replace the service's files. Fix it with: ${fixFor(d, why)}`,
      shown,
    );
  }
};

/**
 * At start: creates the state directory (mode 0700) when it is missing and refuses one that
 * another user could plant, replace or write, with the command that fixes it.
 */
export const guardStateDirectory = (stateDir: string): void => {
  if (!posix) return;
  const abs = resolve(stateDir);
  let real = resolveTrusted(abs, 'state directory');
  if (!lstatSync(real, { throwIfNoEntry: false })) {
    let parent = dirname(real);
    while (!lstatSync(parent, { throwIfNoEntry: false })) parent = dirname(parent);
    const s = statSync(parent);
    if (s.mode & 0o002 || (s.mode & 0o020 && s.gid !== 0 && s.gid !== gid())) {
      throw unsafe(
        `The state directory ${abs} does not exist, and ${parent} is writable by other users (mode ${modeOf(s)}): ` +
          `another local user could create it first. Create it yourself with: install -d -m 0700 ${abs}`,
        abs,
      );
    }
    checkChain(parent, 'state directory', abs);
    mkdirSync(real, { recursive: true, mode: 0o700 });
    real = resolveTrusted(abs, 'state directory');
  }
  checkChain(real, 'state directory', abs);
  try {
    accessSync(real, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    throw new PowerPlanError(
      'forbidden',
      `The state directory ${abs} belongs to uid ${statSync(real).uid} and this user (uid ${uid()}) cannot write it: ` +
        "run powerplan as the service's user (root: sudo powerplan ...), or choose a state directory of your own with POWERPLAN_STATE_DIR.",
      { unsafePermissions: true, path: abs },
    );
  }
};

/** At start and at every reload: the directories holding a file the service trusts (the token file). */
export const guardFileDirectory = (path: string, what: string): void => {
  if (!posix) return;
  const dir = resolveTrusted(dirname(resolve(path)), what);
  if (!lstatSync(dir, { throwIfNoEntry: false })) return;
  const s = statSync(dir);
  if (
    !lstatSync(path, { throwIfNoEntry: false }) &&
    (s.mode & 0o1002 || (s.mode & 0o020 && s.gid !== 0 && s.gid !== gid()))
  )
    throw unsafe(
      `The ${what} ${path} does not exist, and ${dir} is writable by other users (mode ${modeOf(s)}): another local user ` +
        'could create it first (a FIFO that hangs every request, or a file of their own). Put it in a directory only this user ' +
        'can write (e.g. the state directory): install -d -m 0700 <dir> and point POWERPLAN_TOKEN_FILE there',
      path,
    );
  for (const d of chain(dir)) {
    const why = unsafeDirectory(d, statSync(d), { last: false });
    if (why)
      throw unsafe(
        `The ${what} ${path} is not safe: the directory ${d} ${why}, so another local user could replace it. ` +
          `Fix it with: ${fixFor(d, why)}`,
        path,
      );
  }
};

/** Why an open state file is not one to trust, with the command that fixes it; undefined when fine. */
export const unsafeFile = (s: Stats, path: string, opts: { secret?: boolean } = {}): string | undefined => {
  if (!s.isFile()) return 'is not a regular file';
  if (!posix) return undefined;
  if (!trustedOwner(s.uid))
    return `belongs to another user (uid ${s.uid}); it must belong to this user or root: chown ${uid()} ${path}`;
  if (s.mode & 0o022)
    return `is writable by group or others (mode ${modeOf(s)}); fix it with: chmod go-w ${path}`;
  if (opts.secret && s.mode & 0o077)
    return `is a secret but readable by group or others (mode ${modeOf(s)}); fix it with: chmod 600 ${path}`;
  return undefined;
};

/**
 * Opens a state file without following a symbolic link and checks it on the handle, so that the
 * file checked is the file used. `flags` are the open flags (O_NOFOLLOW is added); undefined when
 * it does not exist and is not being created.
 */
export const openStateFile = async (
  path: string,
  flags: number,
  opts: { what?: string; secret?: boolean; mode?: number } = {},
): Promise<FileHandle | undefined> => {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | O_NOFOLLOW | O_NONBLOCK, opts.mode ?? 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !(flags & constants.O_CREAT)) return undefined;
    // A FIFO without a reader, opened for writing without blocking.
    if (code === 'ENXIO')
      throw unsafe(
        `${opts.what ?? 'The state file'} ${path} is not a regular file. Remove it with: rm ${path}`,
        path,
      );
    if (code === 'ELOOP' || code === 'EMLINK')
      throw unsafe(
        `${opts.what ?? 'The state file'} ${path} is a symbolic link, which the service never follows: ` +
          `another user may have planted it. Remove it with: rm ${path}`,
        path,
      );
    throw e;
  }
  const stats = await handle.stat();
  if (stats.isDirectory()) {
    // As a read of a directory fails: a failed read, not a planted file.
    await handle.close();
    throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), {
      code: 'EISDIR',
    });
  }
  const why = unsafeFile(stats, path, opts);
  if (why) {
    await handle.close();
    throw unsafe(`${opts.what ?? 'The state file'} ${path} ${why}`, path);
  }
  return handle;
};

/** Reads a state file whole (O_NOFOLLOW, checked on the handle); undefined when absent. */
export const readStateFile = async (
  path: string,
  opts: { what?: string; secret?: boolean } = {},
): Promise<{ text: string; stats: Stats } | undefined> => {
  const handle = await openStateFile(path, constants.O_RDONLY, opts);
  if (!handle) return undefined;
  try {
    const stats = await handle.stat();
    return { text: await handle.readFile('utf8'), stats };
  } finally {
    await handle.close();
  }
};

/** Flags for a new temporary file: created here, never an existing name, never through a link. */
export const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;

/**
 * Writes `text` to a new temporary file at `path` (NEW_FILE, fsync'd), to be renamed into place by
 * the caller. When any step fails (a full disk: ENOSPC at the write or the sync) the file is
 * removed before the error goes on, so that a refused change leaves nothing behind.
 */
export const writeNewFile = async (
  path: string,
  text: string,
  opts: { what?: string; mode?: number } = {},
): Promise<void> => {
  const handle = (await openStateFile(path, NEW_FILE, opts))!;
  try {
    await handle.writeFile(text);
    await handle.sync();
  } catch (e) {
    await handle.close().catch(() => {});
    await rm(path, { force: true }).catch(() => {});
    throw e;
  }
  await handle.close();
};

/** Runs `fn` (the rename of a temporary file into place); removes the temporary file when it fails. */
export const orRemove = async (tmp: string, fn: () => Promise<void>): Promise<void> => {
  try {
    await fn();
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => {});
    throw e;
  }
};
