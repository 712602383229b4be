/**
 * Windows permissions of the state directory and the token file. Under %ProgramData% a new
 * directory inherits entries that let standard users create and change files (Node ignores
 * mkdir's mode on Windows), so a user could plant a journal, a live-looking lock, an audit log
 * they edit later or a token file with their own token. So:
 * - at creation the service sets an explicit ACL: SYSTEM and Administrators only, inheritance off;
 * - at start it refuses (exit code 2, with the command that fixes it) a state directory or token
 *   file that anyone else can write.
 *
 * icacls runs through the command wrapper. Its listing names principals in the system's language
 * (`BUILTIN\Users`, `VORDEFINIERT\Benutzer`), so the check never parses names: it reads the DACL
 * with `icacls <path> /save <file>`, which writes SDDL (UTF-16LE: a line with the name, a line
 * with the DACL), where principals are SIDs or their fixed two-letter aliases.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PowerPlanError } from '../domain/errors.ts';
import { type RunFn, runCommand } from './run-command.ts';

/** The principals allowed to write: LocalSystem and the Administrators group (aliases and SIDs). */
const TRUSTED = new Set(['SY', 'BA', 'S-1-5-18', 'S-1-5-32-544']);
/** CREATOR OWNER only applies to whoever creates a child, which only trusted principals can. */
const CREATOR_OWNER = new Set(['CO', 'S-1-3-0']);

/** Access bits that let a principal change what is in a file or directory, or its ACL. */
const WRITE_BITS =
  0x2 | // write data / add file
  0x4 | // append data / add subdirectory
  0x10 | // write extended attributes
  0x40 | // delete child
  0x100 | // write attributes
  0x10000 | // delete
  0x40000 | // write DAC
  0x80000 | // write owner
  0x10000000 | // generic all
  0x40000000; // generic write

/** SDDL access-right codes and their masks (file and directory objects). */
const RIGHTS: Record<string, number> = {
  GA: 0x10000000,
  GW: 0x40000000,
  GR: 0x80000000,
  GX: 0x20000000,
  FA: 0x1f01ff,
  FW: 0x120116,
  FR: 0x120089,
  FX: 0x1200a0,
  SD: 0x10000,
  RC: 0x20000,
  WD: 0x40000,
  WO: 0x80000,
  CC: 0x1,
  DC: 0x2,
  LC: 0x4,
  SW: 0x8,
  RP: 0x10,
  WP: 0x20,
  DT: 0x40,
  LO: 0x80,
  CR: 0x100,
};

const rightsMask = (rights: string): number => {
  if (/^0x[0-9a-f]+$/i.test(rights)) return Number.parseInt(rights, 16);
  let mask = 0;
  for (let i = 0; i < rights.length; i += 2) mask |= RIGHTS[rights.slice(i, i + 2)] ?? WRITE_BITS;
  return mask;
};

/**
 * The principals (SIDs or SDDL aliases) that a DACL in SDDL lets write, other than SYSTEM and
 * Administrators. Grammar: `D:<flags>(<type>;<flags>;<rights>;<object>;<inherited object>;<sid>)...`.
 * Only allow entries count; an entry that is not understood counts as granting write.
 */
export const writersBeyondAdmins = (sddl: string): string[] => {
  const dacl = /D:[A-Z]*((?:\([^)]*\))*)/.exec(sddl)?.[1];
  if (dacl === undefined) return ['(no DACL: everyone)'];
  const out = new Set<string>();
  for (const [, ace] of dacl.matchAll(/\(([^)]*)\)/g)) {
    const [type, , rights = '', , , sid = ''] = ace!.split(';');
    if (type !== 'A' && type !== 'OA') continue;
    if (TRUSTED.has(sid) || CREATOR_OWNER.has(sid)) continue;
    if (rightsMask(rights) & WRITE_BITS) out.add(sid);
  }
  return [...out];
};

export interface AclOptions {
  icacls: string;
  run?: RunFn;
}

/** The command that gives `path` the service's ACL (SYSTEM and Administrators, full control). */
export const fixArgs = (path: string, directory: boolean): string[] => {
  const inherit = directory ? '(OI)(CI)' : '';
  return [path, '/inheritance:r', '/grant:r', `*S-1-5-18:${inherit}F`, `*S-1-5-32-544:${inherit}F`];
};

const icaclsFailed = (what: string, path: string, r: { stdout: Buffer; stderr: Buffer; exitCode: number }) =>
  new PowerPlanError(
    'os_error',
    `icacls could not ${what} ${path} (exit code ${r.exitCode}): ${(r.stderr.toString('utf8') || r.stdout.toString('utf8')).trim()}`,
  );

/** Gives `path` the explicit ACL: SYSTEM and Administrators only, nothing inherited. */
export const restrictToAdmins = async (path: string, directory: boolean, o: AclOptions): Promise<void> => {
  const r = await (o.run ?? runCommand)(o.icacls, fixArgs(path, directory));
  if (r.exitCode !== 0) throw icaclsFailed('set the ACL of', path, r);
};

/** The DACL of `path` in SDDL, through `icacls /save`. */
export const readDacl = async (path: string, o: AclOptions): Promise<string> => {
  const out = join(tmpdir(), `powerplan-acl-${randomBytes(6).toString('hex')}.txt`);
  try {
    const r = await (o.run ?? runCommand)(o.icacls, [path, '/save', out, '/q']);
    if (r.exitCode !== 0) throw icaclsFailed('read the ACL of', path, r);
    const text = (await readFile(out)).toString('utf16le').replace(/^\uFEFF/, '');
    return text.split(/\r?\n/)[1]?.trim() ?? '';
  } finally {
    await rm(out, { force: true });
  }
};

/** Exit code of a start refused for unsafe permissions (the same as a configuration error). */
export const UNSAFE_PERMISSIONS_EXIT = 2;

/**
 * At start: creates the state directory with the explicit ACL when it does not exist, then
 * refuses a state directory or token file that non-administrators can write.
 */
export const guardStatePermissions = async (
  target: { stateDir: string; tokenFile?: string | undefined },
  o: AclOptions & { mkdir: (path: string) => void },
): Promise<void> => {
  if (!existsSync(target.stateDir)) {
    o.mkdir(target.stateDir);
    await restrictToAdmins(target.stateDir, true, o);
  }
  const checks: [string, boolean, string][] = [[target.stateDir, true, 'state directory']];
  if (target.tokenFile && existsSync(target.tokenFile)) checks.push([target.tokenFile, false, 'token file']);
  for (const [path, directory, what] of checks) {
    const writers = writersBeyondAdmins(await readDacl(path, o));
    if (!writers.length) continue;
    const fix = fixArgs(path, directory).map((a) => (a.includes(' ') ? `"${a}"` : a));
    throw new PowerPlanError(
      'forbidden',
      `The ${what} ${path} can be written by principals other than SYSTEM and Administrators (${writers.join(', ')}): ` +
        `a standard user could plant or change the service's files. Fix it from an elevated prompt with:\n  icacls ${fix.join(' ')}\n` +
        'then start the service again (see docs/SECURITY.md).',
      { unsafePermissions: true, path, writers },
    );
  }
};
