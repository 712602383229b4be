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
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PowerPlanError } from '../domain/errors.ts';
import { type CommandError, type RunFn, runCommand } from './run-command.ts';
import { isUnparsed, parseSddl } from './sddl.ts';

/** The principals allowed to write and to own: LocalSystem and the Administrators group (aliases and SIDs). */
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

/** The mask of an SDDL rights field; a code that is not known counts as write (fail closed). */
const rightsMask = (rights: string): number => {
  if (/^0x[0-9a-f]+$/i.test(rights)) return Number.parseInt(rights, 16);
  if (/^\d+$/.test(rights)) return Number(rights);
  let mask = 0;
  for (let i = 0; i < rights.length; i += 2) mask |= RIGHTS[rights.slice(i, i + 2)] ?? WRITE_BITS;
  return mask;
};

/** What an entry shows in a refusal when it has no principal to name. */
const shown = (text: string) => `unreadable entry ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;

/**
 * The principals (SIDs or SDDL aliases) that a DACL in SDDL lets write, other than SYSTEM and
 * Administrators. Fail closed: no DACL (or `NO_ACCESS_CONTROL`) is everyone; a conditional
 * (callback) entry counts as granting what it names whatever its condition, a conditional deny
 * too (its condition decides when it applies, which this check does not evaluate); an entry of a
 * type, right or shape that is not understood, and text after the entries, count as writers.
 * Plain deny entries grant nothing; inherit-only entries count (they reach what is created inside).
 */
export const writersBeyondAdmins = (sddl: string): string[] => {
  const sd = parseSddl(sddl);
  if (!sd.dacl) return ['(no DACL: everyone)'];
  const out = new Set<string>();
  for (const entry of sd.dacl.entries) {
    if (isUnparsed(entry)) {
      out.add(shown(entry.unparsed));
      continue;
    }
    if (TRUSTED.has(entry.sid)) continue;
    if (entry.type === 'D' || entry.type === 'OD') continue;
    if (entry.type === 'A' || entry.type === 'OA') {
      if (!CREATOR_OWNER.has(entry.sid) && rightsMask(entry.rights) & WRITE_BITS) out.add(entry.sid);
      continue;
    }
    // Conditional (XA, XD, ZA) and every other type in a DACL.
    out.add(entry.sid);
  }
  if (sd.trailing !== undefined) out.add(shown(sd.trailing));
  return [...out];
};

/**
 * What is unsafe in a security descriptor: an owner that is not SYSTEM or Administrators (an owner
 * may always change the ACL; `(no owner)` when the text names none), and the writers beyond them.
 */
export const unsafeAccess = (sddl: string): { owner?: string; writers: string[] } => {
  const { owner = '(no owner)' } = parseSddl(sddl);
  const writers = writersBeyondAdmins(sddl);
  return TRUSTED.has(owner) ? { writers } : { owner, writers };
};

export interface AclOptions {
  icacls: string;
  /** Windows PowerShell, which reads the owner (icacls cannot show it). */
  powershell?: string;
  run?: RunFn;
}

/**
 * The icacls commands that give `path` (and, for a directory, everything in it) the service's
 * owner (Administrators) and ACL (SYSTEM and Administrators, full control, nothing inherited from
 * above), in this order.
 */
export const fixCommands = (path: string, directory: boolean): string[][] => {
  const inherit = directory ? '(OI)(CI)' : '';
  // /T: a directory's files and subdirectories too, so that a planted file keeps neither its owner
  // nor its entries; they then inherit what the last command gives the directory.
  const tree = directory ? ['/T'] : [];
  return [
    [path, '/setowner', '*S-1-5-32-544', ...tree],
    // Drops every explicit entry (a planted one included), then every inherited one.
    [path, '/reset', ...tree],
    [path, '/inheritance:r', '/grant:r', `*S-1-5-18:${inherit}F`, `*S-1-5-32-544:${inherit}F`],
  ];
};

/** What to do when a tool fails, by tool: the administrator's next step, in one sentence. */
const REMEDY = {
  icacls:
    'run powerplan from an elevated prompt (as an administrator, or as SYSTEM for the service), and check that ' +
    'icacls.exe runs (it is in %SystemRoot%\\System32; another path can be named with POWERPLAN_ICACLS)',
  PowerShell:
    'check that Windows PowerShell runs (powershell.exe -NoProfile -Command "Get-Acl $env:ProgramData"), or name it ' +
    'with POWERPLAN_POWERSHELL; it reads the owners, which icacls cannot show',
} as const;

/** A tool's output as one line of bounded, printable text. */
const oneLine = (text: string) => {
  const t = text
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > 300 ? `${t.slice(0, 297)}...` : t;
};

/**
 * A failure of icacls or PowerShell while the permissions are checked or set: one line saying what
 * failed, why and what to do; the CLI prints it and exits 2, like a refused start.
 */
const toolFailure = (tool: keyof typeof REMEDY, what: string, path: string, why: string, cause?: unknown) =>
  new PowerPlanError(
    'os_error',
    `cannot ${what} ${path}: ${tool} ${why}. To fix: ${REMEDY[tool]}; then run it again.`,
    { startup: true, tool },
    { cause },
  );

/** Runs a tool; any way it fails (not found, not started, timed out, an exit code) is a toolFailure. */
const runTool = async (
  tool: keyof typeof REMEDY,
  what: string,
  path: string,
  o: AclOptions,
  file: string,
  args: string[],
  options?: Parameters<RunFn>[2],
) => {
  let r: Awaited<ReturnType<RunFn>>;
  try {
    r = await (o.run ?? runCommand)(file, args, options);
  } catch (e) {
    const c = e as Partial<CommandError>;
    const why = c.notFound
      ? `(${file}) was not found`
      : c.notStarted
        ? `(${file}) could not be started (${c.notStarted})`
        : c.timedOut
          ? `(${file}) did not finish in time`
          : `(${file}) failed: ${oneLine(String((e as Error).message ?? e))}`;
    throw toolFailure(tool, what, path, why, e);
  }
  if (r.exitCode !== 0) {
    const said = oneLine(r.stderr.toString('utf8') || r.stdout.toString('utf8'));
    throw toolFailure(
      tool,
      what,
      path,
      `exited with code ${r.exitCode}${said ? ` (${said})` : ' and printed nothing'}`,
    );
  }
  return r;
};

/** Gives `path` the Administrators group as owner and the explicit ACL: SYSTEM and Administrators only, nothing inherited. */
export const restrictToAdmins = async (path: string, directory: boolean, o: AclOptions): Promise<void> => {
  for (const args of fixCommands(path, directory))
    await runTool('icacls', 'set the ACL of', path, o, o.icacls, args);
};

/**
 * The DACL of `path` in SDDL, through `icacls /save`, which writes UTF-16LE (with or without a
 * byte order mark): a line with the name (empty for a path ending in a backslash), then the DACL.
 */
export const readDacl = async (path: string, o: AclOptions): Promise<string> => {
  const out = join(tmpdir(), `powerplan-acl-${randomBytes(6).toString('hex')}.txt`);
  try {
    await runTool('icacls', 'read the ACL of', path, o, o.icacls, [path, '/save', out, '/q']);
    const text = await readFile(out).then(
      (b) => b.toString('utf16le').replace(/^\uFEFF/, ''),
      () => '',
    );
    // A name cannot contain a colon, so the DACL is the first line that starts with `D:`.
    const dacl = text.split(/\r?\n/).find((line) => line.startsWith('D:'));
    if (dacl === undefined)
      throw toolFailure('icacls', 'read the ACL of', path, `/save wrote no DACL (to ${out})`);
    return dacl.trim();
  } finally {
    await rm(out, { force: true });
  }
};

/**
 * Prints the owner of each path in $env:POWERPLAN_ACL_PATHS (one per line; a Windows name cannot
 * hold a line break) as SDDL (`O:BA`), one line per path in order, through .NET (no module to
 * load, no name in the system's language). The paths travel in the environment, never in the
 * command text.
 */
const OWNER_SCRIPT = [
  "$ErrorActionPreference = 'Stop'",
  '$s = [System.Security.AccessControl.AccessControlSections]::Owner',
  'foreach ($p in ($env:POWERPLAN_ACL_PATHS -split "`n")) { $a = if ([System.IO.Directory]::Exists($p)) { [System.IO.Directory]::GetAccessControl($p, $s) } else { [System.IO.File]::GetAccessControl($p, $s) }; $a.GetSecurityDescriptorSddlForm($s) }',
].join('; ');

/**
 * The owner of each of `paths` (a SID or alias), in order, from one PowerShell process (its cold
 * start takes a second or more): `icacls /save` leaves the owner out.
 */
export const readOwners = async (
  paths: readonly string[],
  o: AclOptions & { powershell: string },
): Promise<string[]> => {
  const what = paths.join(', ');
  const r = await runTool(
    'PowerShell',
    'read the owner of',
    what,
    o,
    o.powershell,
    ['-NoLogo', '-NoProfile', '-NonInteractive', '-InputFormat', 'None', '-Command', OWNER_SCRIPT],
    // A cold start of PowerShell on a busy server takes seconds.
    { timeoutMs: 30_000, env: { POWERPLAN_ACL_PATHS: paths.join('\n') } },
  );
  const lines = r.stdout
    .toString('utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim());
  const owners = lines.map((l) => parseSddl(l).owner);
  if (owners.length !== paths.length || owners.some((x) => x === undefined)) {
    const said = oneLine(r.stdout.toString('utf8') || r.stderr.toString('utf8'));
    throw toolFailure(
      'PowerShell',
      'read the owner of',
      what,
      `printed ${lines.length} owner line(s) for ${paths.length} path(s)${said ? ` (${said})` : ', and nothing else'}`,
    );
  }
  return owners as string[];
};
