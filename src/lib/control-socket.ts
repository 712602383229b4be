/**
 * The local control channel's address: a Unix domain socket in a directory only the service's user
 * (and root) can enter, or on Windows a named pipe. The OS checks who may connect (the directory's
 * permissions; the pipe's default DACL, which lets only SYSTEM, Administrators and the pipe's creator
 * write), so a connection on it is the local administrator and carries no credential a squatter of
 * the TCP port, or of the pipe name, could catch (docs/SECURITY.md, "Local control").
 *
 * POWERPLAN_CONTROL_SOCKET names it; the default is `<state dir>/control/powerplan.sock`, or
 * `\\.\pipe\powerplan` on Windows; `none` turns the channel off.
 */
import { lstatSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { guardStateDirectory, posix, unsafe } from './safe-fs.ts';

export const CONTROL_DIRECTORY = 'control';
export const CONTROL_SOCKET = 'powerplan.sock';
export const WINDOWS_CONTROL_PIPE = '\\\\.\\pipe\\powerplan';

/** Where the channel listens for this configuration, or undefined when it is turned off. */
export const controlSocketPath = (config: { stateDir: string; controlSocket?: string | undefined }) => {
  if (config.controlSocket === 'none') return undefined;
  if (config.controlSocket) return config.controlSocket;
  return posix ? join(config.stateDir, CONTROL_DIRECTORY, CONTROL_SOCKET) : WINDOWS_CONTROL_PIPE;
};

/** A Unix socket path longer than this does not fit in sockaddr_un (108 bytes with the NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Before listening on a Unix socket: its directory exists (created mode 0700), belongs to this user
 * or root, lies below directories no one else can write, and lets no group or other user in; a
 * socket left by an earlier run is removed (no one else can have put anything there). Throws a
 * PowerPlanError naming the fix otherwise.
 */
export const prepareControlDirectory = (path: string): void => {
  if (!posix) return;
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw unsafe(
      `The control socket path ${path} is longer than ${MAX_SOCKET_PATH} bytes, which a Unix socket cannot have; ` +
        'choose a shorter POWERPLAN_CONTROL_SOCKET or POWERPLAN_STATE_DIR',
      path,
    );
  }
  const dir = dirname(path);
  guardStateDirectory(dir);
  const s = lstatSync(dir);
  if (s.mode & 0o077) {
    throw unsafe(
      `The control socket's directory ${dir} lets other users in (mode ${(s.mode & 0o777).toString(8)}), ` +
        `so the socket would not prove who connects. Fix it with: chmod 0700 ${dir}`,
      dir,
    );
  }
  const old = lstatSync(path, { throwIfNoEntry: false });
  if (old && !old.isSocket()) {
    throw unsafe(
      `${path} exists and is not a socket; remove it or choose another POWERPLAN_CONTROL_SOCKET`,
      path,
    );
  }
  if (old) rmSync(path);
};
