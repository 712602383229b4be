/**
 * POSIX ACL entries (`setfacl -m u:nobody:rwx dir`, shown by `ls` as a `+` after the mode) that
 * let another user write a directory the service trusts. Node has no call for extended attributes,
 * where the kernel keeps ACLs (`system.posix_acl_access`), but it does not need one in the usual
 * case: every named user and group entry is bounded by the ACL's mask, and the mask is what the
 * mode shows as the group bits. A directory whose group bits hold no write therefore grants no
 * write through an ACL, whatever it says, and costs nothing more than the stat already made.
 *
 * Only a directory whose group bits allow writing and whose group is trusted (root, or this
 * process' group: otherwise it is refused for its group anyway) may be an ACL granting others
 * write; for that one `getfacl` is asked, once per check (at start and at a token-file reload,
 * never per request). Without getfacl the directory is refused, saying how to resolve it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const GETFACL = ['/usr/bin/getfacl', '/bin/getfacl'];

/**
 * The entries of `getfacl -cpn` output (access and default) that grant write to a user or group
 * other than those in `trusted` (numeric ids), the mask applied to the access entries.
 */
export const aclWriters = (text: string, trusted: { uids: number[]; gids: number[] }): string[] => {
  const lines = text.split('\n').map((l) => l.replace(/\s*#.*$/, '').trim());
  const mask = (prefix: string) => lines.find((l) => l.startsWith(`${prefix}mask::`))?.slice(-3) ?? 'rwx';
  const out: string[] = [];
  for (const line of lines) {
    const m = /^(default:)?(user|group):(\d+):([rwx-]{3})$/.exec(line);
    if (!m) continue;
    const [, def = '', kind, id, perms] = m;
    const ids = kind === 'user' ? trusted.uids : trusted.gids;
    if (ids.includes(Number(id))) continue;
    // A default entry reaches what is created inside, through the creating mode's own mask.
    if (perms![1] === 'w' && mask(def)[1] === 'w') out.push(`${def}${kind}:${id}:${perms}`);
  }
  return out;
};

/**
 * Why the ACL of `dir` (whose group bits allow writing) lets another user write, or undefined when
 * it has no such entry; a reason too when it cannot be read.
 */
export const aclProblem = (dir: string, trusted: { uids: number[]; gids: number[] }): string | undefined => {
  const getfacl = GETFACL.find((p) => existsSync(p));
  if (!getfacl)
    return 'is group-writable (the group bits may be the mask of a POSIX ACL granting other users write, and getfacl, package acl, is not installed to tell)';
  const r = spawnSync(getfacl, ['-cpn', '--', dir], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0)
    return `is group-writable and its ACL could not be read (getfacl: ${(r.stderr || r.error?.message || '').trim()})`;
  const writers = aclWriters(r.stdout, trusted);
  return writers.length
    ? `has POSIX ACL entries that let other users write it (${writers.join(', ')})`
    : undefined;
};
