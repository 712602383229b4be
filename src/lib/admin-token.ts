/**
 * The local administrator credential: a control token that `powerplan serve` keeps in its state
 * directory as `admin.token`, readable only by the service's user (root) or, on Windows, by SYSTEM
 * and Administrators. Local control no longer needs it: the control socket (or pipe) proves the
 * caller to the OS's satisfaction without any credential (lib/control-socket.ts). It remains for
 * what cannot use the socket, such as pasting into the status page in a browser.
 *
 * Format: one line, the token (`pp_` and 43 base64url characters), then a newline. A new one is
 * written at every start, so a token caught by a program that took the port while the service was
 * down no longer works once the service is back. A file at the name that is not one the service
 * wrote (another owner, readable by others, not a token, a symbolic link) is replaced too, and
 * the log says so.
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
 * Writes a new credential, replacing the one of the last run (temp file, fsync, rename: a reader
 * never sees half a token, and a planted link at the name is replaced, never followed). `restrict`
 * gives the file its ACL on Windows (SYSTEM and Administrators); `onReplaced` hears when the file
 * there was not one this service wrote.
 */
export const ensureAdminCredential = async (
  stateDir: string,
  options: { restrict?: (path: string) => Promise<void>; onReplaced?: (why: string) => void } = {},
): Promise<AdminCredential> => {
  const path = adminTokenPath(stateDir);
  if (!(await readOwn(path))) {
    const existed = await openStateFile(path, constants.O_RDONLY).then(
      async (h) => {
        await h?.close();
        return h !== undefined;
      },
      () => true,
    );
    if (existed)
      options.onReplaced?.(`${path} was not a credential this service wrote; replaced by a new one`);
  }
  const token = newToken();
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeNewFile(tmp, `${token}\n`, { mode: 0o600 });
  try {
    await options.restrict?.(tmp);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
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
