/**
 * The Windows counterpart of safe-fs.ts' checks, at start (and for the token file at every
 * reload): the state directory, every file and directory in it (admin.token, the state files,
 * the audit logs) and the token file must be owned by SYSTEM or Administrators and writable by no
 * one else (windows-acl.ts reads and judges the owner and DACL).
 *
 * Why at start rather than at every open, as on POSIX: reading an owner takes a PowerShell (a
 * second or more) and a DACL an icacls, and no program runs per read. None is needed either:
 * once the directory itself has an explicit DACL of SYSTEM and Administrators only (checked here),
 * no one else can create, replace or rename a file in it, so what is checked at start is what is
 * opened later; a planted file is there before the start, or not at all. The token file may live
 * elsewhere, so it is checked again whenever it changes (tokens.ts, its reload).
 *
 * A missing state directory is created under a temporary name beside it, given its ACL, and only
 * then renamed into place, so that it never exists under its name with the inherited ACL that lets
 * users write it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PowerPlanError } from '../domain/errors.ts';
import {
  type AclOptions,
  fixCommands,
  readDacl,
  readOwners,
  restrictToAdmins,
  unsafeAccess,
} from './windows-acl.ts';

/** Exit code of a start refused for unsafe permissions (the same as a configuration error). */
export const UNSAFE_PERMISSIONS_EXIT = 2;

const quoted = (args: string[]) => args.map((a) => (a.includes(' ') ? `"${a}"` : a)).join(' ');

type Check = { path: string; directory: boolean; what: string };

/** Refuses (exit 2, with the icacls commands that fix it) the first of `checks` that is unsafe. */
export const refuseUnsafe = async (
  checks: Check[],
  o: AclOptions & { powershell: string },
): Promise<void> => {
  if (!checks.length) return;
  const owners = await readOwners(
    checks.map((c) => c.path),
    o,
  );
  for (const [i, { path, directory, what }] of checks.entries()) {
    // The owner's SID and the DACL make one SDDL string (`O:<sid>D:...`), judged as a whole.
    const { owner, writers } = unsafeAccess(`O:${owners[i]}${await readDacl(path, o)}`);
    const badOwner = owner !== undefined;
    if (!badOwner && !writers.length) continue;
    const problems = [
      ...(badOwner
        ? [`is owned by ${owner}, not SYSTEM or Administrators (an owner can change its ACL at any time)`]
        : []),
      ...(writers.length
        ? [`can be written by principals other than SYSTEM and Administrators (${writers.join(', ')})`]
        : []),
    ];
    const fix = fixCommands(path, directory)
      .map((c) => `  icacls ${quoted(c)}\n`)
      .join('');
    throw new PowerPlanError(
      'forbidden',
      `The ${what} ${path} ${problems.join(' and ')}: a standard user could plant or change the service's files. ` +
        `Fix it from an elevated prompt with:\n${fix}then start the service again (see docs/SECURITY.md).`,
      { unsafePermissions: true, path, writers, ...(badOwner ? { owner } : {}) },
    );
  }
};

/** Creates `dir` with its ACL in place: under a temporary name, restricted, then renamed. */
const createRestricted = async (
  dir: string,
  o: AclOptions & { mkdir: (path: string) => void },
): Promise<void> => {
  const tmp = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    o.mkdir(tmp);
  } catch (e) {
    throw new PowerPlanError(
      'os_error',
      `cannot create the state directory ${dir}: ${(e as Error).message}. To fix: run powerplan from an elevated prompt ` +
        '(or as the service), or choose another directory with POWERPLAN_STATE_DIR; then run it again.',
      { startup: true },
      { cause: e },
    );
  }
  try {
    await restrictToAdmins(tmp, true, o);
    renameSync(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    // Created meanwhile by someone else: it is checked below like any existing one.
    if (!existsSync(dir)) throw e;
  }
};

/**
 * At start: creates the state directory with the explicit owner and ACL when it does not exist,
 * then refuses a state directory, an entry in it or a token file that is owned by anyone but
 * SYSTEM or Administrators (an owner may always change the ACL) or that anyone else can write.
 */
export const guardStatePermissions = async (
  target: { stateDir: string; tokenFile?: string | undefined },
  o: AclOptions & { powershell: string; mkdir: (path: string) => void },
): Promise<void> => {
  if (!existsSync(target.stateDir)) await createRestricted(target.stateDir, o);
  const checks: Check[] = [{ path: target.stateDir, directory: true, what: 'state directory' }];
  const tokenFile = target.tokenFile && existsSync(target.tokenFile) ? resolve(target.tokenFile) : undefined;
  for (const entry of readdirSync(target.stateDir, { withFileTypes: true }))
    if (resolve(target.stateDir, entry.name) !== tokenFile)
      checks.push({
        path: join(target.stateDir, entry.name),
        directory: entry.isDirectory(),
        what: entry.isDirectory() ? 'directory' : 'state file',
      });
  if (tokenFile) checks.push({ path: target.tokenFile!, directory: false, what: 'token file' });
  await refuseUnsafe(checks, o);
};
