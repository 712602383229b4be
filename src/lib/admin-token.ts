/**
 * The local administrator credential: a control token that `powerplan serve` keeps in its state
 * directory as `admin.token`, readable only by the service's user (root) or, on Windows, by SYSTEM
 * and Administrators. Whoever can read it proves to the OS's satisfaction that they administer
 * this host; a local program of any other user cannot, and gets only `read` without a token.
 *
 * Format: one line, the token (`pp_` and 43 base64url characters), then a newline. The file is
 * written at the first start and kept across restarts (an Ansible play or a PowerShell session
 * that read it keeps working); delete it and restart the service to replace it. A file that is
 * not one the service wrote (another owner, readable by others, not a token, a symbolic link) is
 * replaced by a new one.
 *
 * The service accepts it only from loopback peers (it is a credential of this host), in the default
 * mode and with a token file alike; callers presenting it are audited as `local-admin`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { constants } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { openStateFile, readStateFile, writeNewFile } from './safe-fs.ts';
import { newToken, TOKEN_SHAPE } from './tokens.ts';

export const ADMIN_TOKEN_FILE = 'admin.token';

export const adminTokenPath = (stateDir: string): string => join(stateDir, ADMIN_TOKEN_FILE);

/** The token in a file of the service's own, or undefined when it is absent or not to be trusted. */
const readOwn = async (path: string): Promise<string | undefined> => {
  try {
    const token = (
      await readStateFile(path, { what: 'The local administrator credential', secret: true })
    )?.text.trim();
    return token && TOKEN_SHAPE.test(token) ? token : undefined;
  } catch {
    return undefined;
  }
};

export interface AdminCredential {
  path: string;
  /** Whether `token` is the local administrator credential (constant time). */
  matches(token: string): boolean;
}

/**
 * Reads the credential or writes a new one (temp file, fsync, rename: a reader never sees half a
 * token, and a planted link at the name is replaced, never followed). `restrict` gives the file its
 * ACL on Windows (SYSTEM and Administrators); `onReplaced` hears why an existing file was replaced.
 */
export const ensureAdminCredential = async (
  stateDir: string,
  options: { restrict?: (path: string) => Promise<void>; onReplaced?: (why: string) => void } = {},
): Promise<AdminCredential> => {
  const path = adminTokenPath(stateDir);
  let token = await readOwn(path);
  if (!token) {
    const existed = await openStateFile(path, constants.O_RDONLY).then(
      async (h) => {
        await h?.close();
        return h !== undefined;
      },
      () => true,
    );
    if (existed)
      options.onReplaced?.(`${path} was not a credential this service wrote; replaced by a new one`);
    token = newToken();
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeNewFile(tmp, `${token}\n`, { mode: 0o600 });
    try {
      await options.restrict?.(tmp);
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }
  const digest = createHash('sha256').update(token).digest();
  return {
    path,
    matches: (presented) => timingSafeEqual(createHash('sha256').update(presented).digest(), digest),
  };
};

/** The credential for a client on this host (the CLI's tests, tooling): undefined when unreadable. */
export const readAdminCredential = (stateDir: string): Promise<string | undefined> =>
  readOwn(adminTokenPath(stateDir));
