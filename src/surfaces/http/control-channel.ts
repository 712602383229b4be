/**
 * The local control channel: the same app served on a Unix domain socket (or a Windows named pipe)
 * besides TCP. The OS decides who may connect (lib/control-socket.ts), so every connection on it is
 * the local administrator (audited as `local-admin`) and sends no credential at all: a program that
 * takes the TCP port while the service is down catches nothing it could use. Node cannot read a
 * peer's credentials (no SO_PEERCRED) nor set a pipe's DACL, which is why the check is the
 * directory's permissions and the pipe's default DACL (docs/SECURITY.md, "Local control").
 */
import type { Socket } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { startupError } from '../../domain/errors.ts';
import { controlSocketPath, prepareControlDirectory } from '../../lib/control-socket.ts';
import type { AppEnv } from './env.ts';
import { SERVER_TIMEOUTS } from './security.ts';

const controlSockets = new WeakSet<object>();

/** Whether a request's socket came in on the control channel (and not over TCP). */
export const isControlConnection = (socket: object | undefined): boolean =>
  socket !== undefined && controlSockets.has(socket);

export interface ControlChannel {
  path: string;
  close(): Promise<void>;
}

/**
 * Listens on the control channel; undefined when it is turned off, or when the pipe name is taken
 * (by another program: then TCP still serves, and the warning says why local control is missing).
 * An unsafe socket directory, or a socket that cannot be made, stops the start (exit 2).
 */
export const listenControlChannel = async (
  app: Hono<AppEnv>,
  config: Config,
  log: Deps['log'],
): Promise<ControlChannel | undefined> => {
  const path = controlSocketPath(config);
  if (!path) return undefined;
  prepareControlDirectory(path);
  const server = createAdaptorServer({
    fetch: app.fetch,
    hostname: 'localhost',
    serverOptions: SERVER_TIMEOUTS,
  });
  server.on('connection', (socket: Socket) => controlSockets.add(socket));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE' && process.platform === 'win32') {
      log.warn('local control pipe taken by another program: local control needs a token until it is freed', {
        pipe: path,
        hint: 'find the process serving the pipe (it is not this service) and stop it, then restart the service',
      });
      return undefined;
    }
    throw startupError(`cannot listen on the control socket ${path}: ${err.message}`, e);
  }
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
};
