/**
 * The HTTP app, the one composition root of the HTTP surface: REST operations, MCP over HTTP,
 * metrics, the API docs, the status page and the OpenAPI document on one Hono app, behind one chain
 * of middleware, in this order:
 *
 * 1. metrics: counts and times every request, refused ones included;
 * 2. security headers (set on the Node response, see headers.ts);
 * 3. CORS for the origins in POWERPLAN_CORS_ORIGINS (a preflight is answered here, without a token);
 * 4. authentication: the token or the local administrator credential; without a token file, the
 *    loopback-only local caller, who may only read;
 * 5. the front-door guard: Host, Origin / Sec-Fetch-Site, Content-Type (guard.ts);
 * 6. the body limit (64 KiB) for requests that may carry a body;
 * 7. the routes.
 *
 * Steps 4 and 5 let the public, data-free routes through (/healthz, /openapi.json, /docs*, the
 * page's files), which the modules serving them declare. Every error, refusals included, is thrown
 * and answered once, as problem+json, by onError.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import { MCP_PATH, mcpHandler } from '../mcp/http.ts';
import { authMiddleware } from './auth.ts';
import { createDocs } from './docs.ts';
import { type AppEnv, jsonResponse } from './env.ts';
import { frontDoorGuard } from './guard.ts';
import { securityHeaders } from './headers.ts';
import { createMetrics } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { createPage } from './page.ts';
import { errorHandler, problemResponse } from './problem.ts';
import { publicMatcher } from './public-routes.ts';
import { createRefusals, Refusal } from './refusals.ts';
import { mountOperations } from './routes.ts';
import { baseSecurity, type HttpSecurity } from './security.ts';

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Builds the app. `security` comes from loadHttpSecurity at start-up (token file, TLS); without it
 * (tests, embedding) the app runs as the default mode does: no token file, loopback callers only.
 */
export const createApp = (deps: Deps, security: HttpSecurity = baseSecurity(deps.config)): Hono<AppEnv> => {
  const app = new Hono<AppEnv>();
  const metrics = createMetrics(deps);
  const refusals = createRefusals(metrics.registry, deps.log);
  const docs = createDocs();
  const page = createPage(deps);
  const isPublic = publicMatcher([
    { path: '/healthz' },
    { path: '/openapi.json' },
    ...docs.publicRoutes,
    ...page.publicRoutes,
  ]);
  const https = security.tls !== undefined;

  app.use('*', metrics.middleware);
  app.use('*', securityHeaders({ frameAncestors: security.frameAncestors, https }));
  if (security.corsOrigins.length) {
    app.use(
      '*',
      cors({
        origin: security.corsOrigins,
        allowMethods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
        allowHeaders: [
          'Authorization',
          'Content-Type',
          'Mcp-Session-Id',
          'Mcp-Protocol-Version',
          'Last-Event-ID',
        ],
        exposeHeaders: ['Mcp-Session-Id', 'WWW-Authenticate'],
        maxAge: 600,
        credentials: false,
      }),
    );
  }
  app.use(
    '*',
    authMiddleware({
      ...(security.verifier ? { verifier: security.verifier } : {}),
      ...(security.admin ? { admin: security.admin } : {}),
      isPublic,
    }),
  );
  app.use(
    '*',
    frontDoorGuard({
      allowedHosts: deps.config.allowedHosts,
      corsOrigins: security.corsOrigins,
      listenHost: deps.config.host,
      https,
      isPublic,
    }),
  );
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new Refusal(
        'payload_too_large',
        'body_too_large',
        `The request body exceeds ${MAX_BODY_BYTES} bytes.`,
      );
    },
  });
  // GET and HEAD bodies are never read. Asking for one makes the Node adapter build a full Request
  // object, the largest single cost of a read (docs/PERFORMANCE.md).
  app.use('*', (c, next) =>
    c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next),
  );

  // Liveness: always 200 while the process answers; `degraded` names damaged state files kept aside.
  app.get('/healthz', (c) => jsonResponse(c, deps.status.health()));
  app.get('/metrics', metrics.handler);
  let openapi: string | undefined;
  app.get('/openapi.json', (c) => {
    openapi ??= JSON.stringify(buildOpenApiDocument());
    return c.body(openapi, 200, { 'content-type': 'application/json' });
  });
  app.route('/', docs.app);
  app.route('/', page.app);
  app.all(MCP_PATH, mcpHandler(deps));
  mountOperations(app, deps);

  app.notFound((c) =>
    problemResponse(c, new PowerPlanError('not_found', `No route for ${c.req.method} ${c.req.path}.`)),
  );
  app.onError(errorHandler(deps.log, refusals));
  return app;
};
