/**
 * Whether this user can use the state directory: the directory itself and every file in it must
 * be readable and writable by the user the service runs as. A state volume written by another user
 * (a container run once with --user 0, then as its default user) would otherwise fail later, one
 * request at a time, with EACCES; this says so once, at start, with what to do. POSIX only (on
 * Windows the state directory's ACL is checked instead, lib/windows-acl.ts).
 */
import { accessSync, constants, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface StateAccessProblem {
  /** The directory, or the names in it, this user cannot read or write. */
  paths: string[];
  /** The owners (uids) of those paths. */
  owners: number[];
  uid: number;
  gid: number;
}

const usable = (path: string, mode: number): boolean => {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
};

/** The paths of the state directory this user cannot use, or undefined when all is well. */
export const stateAccessProblem = (dir: string): StateAccessProblem | undefined => {
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (uid === undefined || gid === undefined) return undefined;
  const bad: string[] = [];
  const owners = new Set<number>();
  const note = (path: string, name: string) => {
    bad.push(name);
    try {
      owners.add(lstatSync(path).uid);
    } catch {
      // gone meanwhile
    }
  };
  if (!usable(dir, constants.R_OK | constants.W_OK | constants.X_OK)) {
    note(dir, dir);
  } else {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const mode = entry.isDirectory()
        ? constants.R_OK | constants.W_OK | constants.X_OK
        : constants.R_OK | constants.W_OK;
      if ((entry.isFile() || entry.isDirectory()) && !usable(path, mode)) note(path, entry.name);
    }
  }
  return bad.length ? { paths: bad, owners: [...owners], uid, gid } : undefined;
};

/** One sentence: what cannot be used, by whom, and the two ways out. */
export const describeStateAccess = (dir: string, p: StateAccessProblem): string => {
  const shown = p.paths.length > 4 ? [...p.paths.slice(0, 4), `${p.paths.length - 4} more`] : p.paths;
  const owners = p.owners.length ? ` (owned by uid ${p.owners.join(', ')})` : '';
  return (
    `the state directory ${dir} has ${p.paths[0] === dir ? 'itself' : shown.join(', ')}${owners} that this user ` +
    `(uid ${p.uid}) cannot read and write. It was written by another user (a container run with --user 0, say): ` +
    `run as that user again, or give it to this one with chown -R ${p.uid}:${p.gid} ${dir}.`
  );
};
