/**
 * One Hono route per operation, derived from the registry. Input is validated once by the
 * operation's zod schema (path params + query for GET/DELETE, path params + JSON body otherwise),
 * the handler runs, the output is validated and returned as JSON; errors go to the app's onError.
 */
import type { Context, Hono } from 'hono';
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import type { Operation } from '../../operations/define.ts';
import { operations } from '../../operations/index.ts';
import { runOperation } from '../../operations/run.ts';
import { coerceStrings } from '../input.ts';
import { type AppEnv, jsonResponse, nodeOf } from './env.ts';

const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

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
 * Per request, an abort signal for when the client goes away (runOperation links it with the
 * service's shutdown). Not AbortSignal.any over the request's own signal: on Node 20 that costs
 * more than the rest of a read request together (docs/PERFORMANCE.md). The response's `close`
 * before it finished means the client is gone.
 */
const requestSignal = (c: Context): { signal: AbortSignal | undefined; release: () => void } => {
  const { outgoing } = nodeOf(c);
  // Not served by the Node adapter (app.fetch in tests): the Request carries its own signal.
  if (!outgoing) return { signal: c.req.raw.signal as AbortSignal | undefined, release: () => {} };
  const controller = new AbortController();
  const onClose = () => {
    if (!outgoing.writableFinished) controller.abort(new Error('The client closed the connection.'));
  };
  // Made late (on first use): the client may have gone already.
  if (outgoing.destroyed) onClose();
  outgoing.once('close', onClose);
  return { signal: controller.signal, release: () => outgoing.off('close', onClose) };
};

export const mountOperations = (app: Hono<AppEnv>, deps: Deps): void => {
  for (const op of operations) {
    app.on(op.http.method, honoPath(op.http.path), async (c) => {
      let made: { signal: AbortSignal | undefined; release: () => void } | undefined;
      try {
        const output = await runOperation(op, readInput(op, c), {
          ...deps,
          caller: c.get('caller'),
          // Asked on first use: most reads never look at it, and an AbortController costs about
          // 10 µs on Node 20, a sixth of a read (docs/PERFORMANCE.md). A function, not a getter:
          // an accessor made per request costs far more (operations/run.ts).
          signal: () => {
            made ??= requestSignal(c);
            return made.signal;
          },
        });
        return jsonResponse(c, output, op.http.status);
      } finally {
        made?.release();
      }
    });
  }
};
