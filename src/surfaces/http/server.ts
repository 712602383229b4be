/**
 * Starts the HTTP server (REST, MCP, the page) on TCP and on the local control socket
 * (control-channel.ts), and stops it cleanly on SIGTERM/SIGINT: stop accepting, then
 * `deps.stop()` (cancel running work, wait for restores), then exit.
 */
import { serve } from '@hono/node-server';
import type { Deps } from '../../deps.ts';
import { createApp } from './app.ts';
import { type ControlChannel, listenControlChannel } from './control-channel.ts';
import { listenFailure, loadHttpSecurity, serveOptions } from './security.ts';

export interface RunningServer {
  url: string;
  /** The control socket or pipe; undefined when turned off or its pipe name is taken. */
  controlSocket: string | undefined;
  close(): Promise<void>;
}

export const startHttpServer = async (deps: Deps): Promise<RunningServer> => {
  // Unsafe settings stop the start before recovery touches anything.
  const security = await loadHttpSecurity(deps.config, deps.log);
  const app = createApp(deps, security);
  const { host, port } = deps.config;
  let server!: ReturnType<typeof serve>;
  let control: ControlChannel | undefined;
  // Recovery first, then listen, then the timers.
  await deps.start({
    serve: async () => {
      server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
        const s = serve({ fetch: app.fetch, hostname: host, port, ...serveOptions(security) }, () =>
          resolve(s),
        );
        s.once('error', (e: NodeJS.ErrnoException) => reject(listenFailure(e, host, port)));
      });
      control = await listenControlChannel(app, deps.config, deps.log).catch(async (e) => {
        await new Promise((done) => server.close(done));
        throw e;
      });
    },
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const url = `${security.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  deps.log.info('listening', {
    url,
    controlSocket: control?.path,
    backend: deps.backend.name,
    stateDir: deps.config.stateDir,
  });
  return {
    url,
    controlSocket: control?.path,
    close: () =>
      new Promise<void>((resolve) => {
        // A running comparison restores the original plan after the abort; exit only once it has.
        const stopped = deps.stop();
        const closed = control?.close() ?? Promise.resolve();
        server.close(() => void Promise.all([stopped, closed]).then(() => resolve()));
        // Keep-alive sockets would hold close() open; they carry no work once we are shutting down.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
};

/** Runs until SIGTERM/SIGINT, then closes the server and exits. */
export const serveUntilSignalled = async (deps: Deps): Promise<void> => {
  const running = await startHttpServer(deps);
  const stop = async (signal: string) => {
    deps.log.info('shutting down', { signal });
    await running.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  // Announce only once the handlers are in place: a signal sent on seeing this line must not kill us.
  process.stdout.write(`powerplan listening on ${running.url} (backend: ${deps.backend.name})\n`);
};
