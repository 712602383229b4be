/**
 * The REST surface: one Hono route per operation, derived from the registry. Input is validated
 * once by the operation's zod schema (path params + query for GET/DELETE, path params + JSON body
 * otherwise), the handler runs, the output is validated and returned as JSON. Errors are
 * problem+json.
 */

import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import { type Caller, localCaller } from '../../domain/scopes.ts';
import type { Operation } from '../../operations/define.ts';
import { operations } from '../../operations/index.ts';
import { runOperation } from '../../operations/run.ts';
import { normalizeError, toProblem } from '../errors.ts';
import { coerceStrings } from '../input.ts';
import { mountMcp } from '../mcp/http.ts';
import { mountDocs } from './docs.ts';
import { createMetrics } from './metrics.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { mountPage } from './page.ts';

export const MAX_BODY_BYTES = 64 * 1024;

/** Variables our middleware leaves on the context for later handlers. */
export type AppEnv = { Variables: { caller: Caller } };

const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

export const problemResponse = (c: Context, error: unknown, log?: Deps['log']): Response => {
  const err = normalizeError(error);
  if (err.code === 'internal')
    log?.error('unexpected error', {
      path: c.req.path,
      error: String(err.cause ?? error),
      stack: (err.cause as Error | undefined)?.stack,
    });
  return c.body(JSON.stringify(toProblem(err)), err.status as 400, {
    'content-type': 'application/problem+json',
  });
};

const readInput = async (op: Operation, c: Context): Promise<unknown> => {
  const params = c.req.param() as Record<string, string>;
  if (op.http.method === 'GET' || op.http.method === 'DELETE') {
    return { ...coerceStrings(op, c.req.queries() ?? {}), ...coerceStrings(op, params) };
  }
  const text = await c.req.text();
  let body: unknown = {};
  if (text.trim() !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      throw new PowerPlanError('invalid_input', 'The request body is not valid JSON.');
    }
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new PowerPlanError('invalid_input', 'The request body must be a JSON object.');
  }
  return { ...body, ...coerceStrings(op, params) };
};

/**
 * Per request, an abort signal for when the client goes away or the service shuts down. Not
 * AbortSignal.any over the request's own signal: on Node 20 that costs more than the rest of a read
 * request together (docs/PERFORMANCE.md). Instead one listener on shutdown aborts every live request,
 * and the response's `close` before it finished means the client is gone.
 */
const requestSignals = (deps: Deps) => {
  const live = new Set<AbortController>();
  const shutdown = deps.shutdown.signal;
  shutdown.addEventListener('abort', () => {
    for (const controller of live) controller.abort(shutdown.reason);
  });
  return (c: Context): { signal: AbortSignal; release: () => void } => {
    const controller = new AbortController();
    if (shutdown.aborted) {
      controller.abort(shutdown.reason);
      return { signal: controller.signal, release: () => {} };
    }
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
    if (!outgoing) {
      // Not served by the Node adapter (app.fetch in tests): the Request carries its own signal.
      const raw = c.req.raw.signal as AbortSignal | undefined;
      live.add(controller);
      const onAbort = () => controller.abort(raw?.reason);
      raw?.addEventListener('abort', onAbort, { once: true });
      return {
        signal: controller.signal,
        release: () => {
          live.delete(controller);
          raw?.removeEventListener('abort', onAbort);
        },
      };
    }
    const onClose = () => {
      if (!outgoing.writableFinished) controller.abort(new Error('The client closed the connection.'));
    };
    live.add(controller);
    outgoing.once('close', onClose);
    return {
      signal: controller.signal,
      release: () => {
        live.delete(controller);
        outgoing.off('close', onClose);
      },
    };
  };
};

const remoteAddress = (c: Context): string | undefined =>
  (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
    ?.remoteAddress;

export interface AppOptions {
  /** Installs middleware (auth, CORS, headers) before the routes; the caller must end up in `caller`. */
  middleware?: (app: Hono<AppEnv>) => void;
}

export const createApp = (deps: Deps, options: AppOptions = {}): Hono<AppEnv> => {
  const app = new Hono<AppEnv>();
  const metrics = createMetrics(deps);
  const requestSignal = requestSignals(deps);
  app.use('*', metrics.middleware);
  app.use('*', async (c, next) => {
    c.set('caller', { ...localCaller, ...(remoteAddress(c) ? { remote: remoteAddress(c) } : {}) });
    await next();
  });
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) =>
      problemResponse(
        c,
        new PowerPlanError('payload_too_large', `The request body exceeds ${MAX_BODY_BYTES} bytes.`),
      ),
  });
  // GET and HEAD bodies are never read. Asking for one makes the Node adapter build a full Request
  // object, the largest single cost of a read (docs/PERFORMANCE.md).
  app.use('*', (c, next) =>
    c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next),
  );
  options.middleware?.(app);

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/metrics', metrics.handler);
  mountDocs(app);
  mountPage(app, deps);
  let openapi: string | undefined;
  app.get('/openapi.json', (c) => {
    openapi ??= JSON.stringify(buildOpenApiDocument());
    return c.body(openapi, 200, { 'content-type': 'application/json' });
  });

  mountMcp(app, deps);

  for (const op of operations) {
    app.on(op.http.method, honoPath(op.http.path), async (c) => {
      const caller = c.get('caller');
      const { signal, release } = requestSignal(c);
      try {
        const output = await runOperation(op, await readInput(op, c), { ...deps, caller, signal });
        return c.json(output as object, op.http.status ?? 200);
      } finally {
        release();
      }
    });
  }

  app.notFound((c) =>
    problemResponse(c, new PowerPlanError('not_found', `No route for ${c.req.method} ${c.req.path}.`)),
  );
  app.onError((err, c) => problemResponse(c, err, deps.log));
  return app;
};
