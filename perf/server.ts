/**
 * The server the API benchmark measures (perf/api.ts starts it as its own process): the real app,
 * built as `powerplan serve` builds it (createApp over buildDeps, with the HTTP security
 * middleware), and beside it in the same process a bare Hono app with one route, `/bare`, that
 * answers the same JSON body without any of the service's work. The difference between the two is
 * the service's overhead; the machine's speed and load cancel out.
 *
 *   tsx perf/server.ts [--backend simulated|windows] [--delay <emulator ms per call>]
 *
 * Prints `bench server listening on <url> (...)` once ready; stops on SIGTERM.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { loadConfig } from '../src/config.ts';
import { buildDeps } from '../src/deps.ts';
import { createApp } from '../src/surfaces/http/app.ts';
import { loadHttpSecurity, serveOptions } from '../src/surfaces/http/security.ts';
import { emulatedWindows } from './lib/emulated-windows.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'simulated' },
    delay: { type: 'string', default: '0' },
  },
});

const stateDir = await mkdtemp(join(tmpdir(), 'powerplan-bench-server-'));
const config = loadConfig({
  POWERPLAN_STATE_DIR: stateDir,
  POWERPLAN_BACKEND: 'simulated',
  POWERPLAN_LOG_LEVEL: 'warn',
  POWERPLAN_PORT: '0',
});
const windows = values.backend === 'windows' ? await emulatedWindows(Number(values.delay)) : undefined;
const deps = buildDeps(config, windows ? { backend: windows.backend } : {});
const security = await loadHttpSecurity(config, deps.log);
const app = createApp(deps, security);

// The same body the real route answers, computed once: only the service's work differs.
const body = await deps.backend.getActive();
const bare = new Hono();
bare.get('/bare', (c) => c.json(body));

const listen = (fetch: (req: Request, env: unknown) => Response | Promise<Response>) =>
  new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0, ...serveOptions(security) }, () => resolve(s));
    s.once('error', reject);
  });
const portOf = (s: ReturnType<typeof serve>) => {
  const address = s.address();
  return typeof address === 'object' && address ? address.port : 0;
};
// The same cheap test decides for both routes.
const server = await listen((req, env) =>
  req.url.endsWith('/bare') ? bare.fetch(req, env) : app.fetch(req, env),
);
// What `powerplan serve` runs beside the listener: recovery, the holds' and the desired plan's
// checkers, and with them the watch of the state directory that the reads rely on.
await deps.start({ serve: async () => undefined });
process.stdout.write(
  `bench server listening on http://127.0.0.1:${portOf(server)} (backend: ${deps.backend.name})\n`,
);

process.once('SIGTERM', () => {
  void deps.stop();
  server.close();
  (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
  void Promise.all([rm(stateDir, { recursive: true, force: true }), windows?.cleanup()]).then(() =>
    process.exit(0),
  );
});
