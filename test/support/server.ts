/**
 * A server for the tests of one describe block: fresh deps (and, when asked, a token file holding
 * named tokens), the server started before the block's tests, stopped and cleaned up after them.
 */
import { join } from 'node:path';
import type { Scope } from '../../src/domain/scopes.ts';
import { createToken } from '../../src/lib/tokens.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { type RunningServer, startHttpServer } from '../../src/surfaces/http/server.ts';
import { type TestDeps, testDeps } from './deps.ts';
import { perBlock } from './fixture.ts';
import { type ServerProcess, startServer } from './processes.ts';

export interface Served<S> {
  t: TestDeps;
  server: S;
  /** Each token asked for, by its name. */
  tokens: Record<string, string>;
}

export interface ServeOptions {
  /** More environment (evaluated in the `before` hook, so it may use what earlier hooks made). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** Tokens to create, by name, with their scopes (process servers only: the file joins the env). */
  tokens?: Record<string, Scope[]>;
  /** Runs on the fresh deps before the server starts (a state file to write, say). */
  prepare?: (t: TestDeps) => Promise<void>;
}

const fixture = <S>(
  options: ServeOptions,
  start: (t: TestDeps, env: Record<string, string>) => Promise<S>,
  stop: (server: S) => Promise<unknown>,
): Served<S> =>
  perBlock(
    async () => {
      const t = await testDeps(typeof options.env === 'function' ? options.env() : options.env);
      const env = { ...t.env };
      const tokens: Record<string, string> = {};
      if (options.tokens) {
        env.POWERPLAN_TOKEN_FILE = join(t.dir, 'tokens.json');
        for (const [name, scopes] of Object.entries(options.tokens)) {
          tokens[name] = (await createToken(env.POWERPLAN_TOKEN_FILE, name, scopes)).token;
        }
      }
      await options.prepare?.(t);
      return { t, server: await start(t, env), tokens };
    },
    async ({ t, server }) => {
      await stop(server);
      await t.cleanup();
    },
  );

/** `powerplan serve` as a child process, the way an operator runs it. */
export const servedProcess = (options: ServeOptions = {}): Served<ServerProcess> =>
  fixture(
    options,
    (_t, env) => startServer(env),
    (s) => s.stop(),
  );

/** The HTTP server in this process (its deps at hand), on a free loopback port. */
export const servedInProcess = (options: Omit<ServeOptions, 'tokens'> = {}): Served<RunningServer> =>
  fixture(
    options,
    (t) => startHttpServer({ ...t.deps, config: { ...t.deps.config, host: '127.0.0.1', port: 0 } }),
    (s) => s.close(),
  );

/**
 * The REST app over a block's deps (see depsPerBlock), made on its first request (once the
 * block's `before` hooks have made the deps).
 */
export const appOver = (t: TestDeps): Pick<ReturnType<typeof createApp>, 'request'> => {
  let app: ReturnType<typeof createApp> | undefined;
  return {
    request: (...args) => {
      app ??= createApp(t.deps);
      return app.request(...args);
    },
  };
};
