/**
 * MCP over Streamable HTTP at `/mcp` on the HTTP app: stateless, for the caller the app's auth
 * middleware left on the context. The app's front-door guard (Host, Origin, content type) runs
 * before it, as for every other route. The SDK and the tool catalog are loaded on the first MCP
 * request and kept (so the REST server and the CLI start without them); a request then costs a
 * small MCP server and transport, and a plain tool call or tool list not even those: the tool list
 * (130 KB) is answered from one copy serialized once.
 */
import type { Context } from 'hono';
import type { Deps } from '../../deps.ts';
import type { Caller } from '../../domain/scopes.ts';

export const MCP_PATH = '/mcp';

type Loaded = {
  Transport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport;
  versions: readonly string[];
  kit: import('./server.ts').McpKit;
};

type McpContext = Context<{ Variables: { caller: Caller } }>;

type ToolCall = {
  jsonrpc: '2.0';
  id: string | number;
  method: 'tools/call';
  params: { name: string; arguments?: object };
};

type ToolList = { jsonrpc: '2.0'; id: string | number; method: 'tools/list'; params?: object };

/** A single JSON-RPC request of `method`, with an id and without `_meta`, in headers the transport would accept. */
const plainRequest = (c: McpContext, body: unknown, versions: readonly string[], method: string): boolean => {
  const m = body as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown } | null;
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return false;
  if (m.jsonrpc !== '2.0' || m.method !== method) return false;
  if (!(typeof m.id === 'string' || (typeof m.id === 'number' && Number.isInteger(m.id)))) return false;
  if (
    m.params !== undefined &&
    (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))
  )
    return false;
  if ((m.params as { _meta?: unknown } | undefined)?._meta !== undefined) return false;
  const accept = c.req.header('accept') ?? '';
  const version = c.req.header('mcp-protocol-version');
  return (
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    /^application\/json\s*(;|$)/i.test(c.req.header('content-type') ?? '') &&
    (version === undefined || versions.includes(version))
  );
};

/**
 * A single `tools/call` without a progress token: answered directly as one JSON body through the
 * same tool call as the SDK's handler. Everything else (initialize, prompts, batches, progress,
 * unusual headers) goes through the SDK's transport.
 */
const plainToolCall = (c: McpContext, body: unknown, versions: readonly string[]): body is ToolCall => {
  if (!plainRequest(c, body, versions, 'tools/call')) return false;
  const p = (body as { params?: { name?: unknown; arguments?: unknown } }).params;
  return (
    p !== undefined &&
    typeof p.name === 'string' &&
    (p.arguments === undefined ||
      (p.arguments !== null && typeof p.arguments === 'object' && !Array.isArray(p.arguments)))
  );
};

/** A single `tools/list` of the first (only) page: answered from the list serialized once. */
const plainToolList = (c: McpContext, body: unknown, versions: readonly string[]): body is ToolList =>
  plainRequest(c, body, versions, 'tools/list') &&
  (body as { params?: { cursor?: unknown } }).params?.cursor === undefined;

const wantsProgress = (body: unknown): boolean =>
  (Array.isArray(body) ? body : [body]).some(
    (m) =>
      (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken !==
      undefined,
  );

/** The handler for every method on MCP_PATH; `caller` is set by the authentication before it. */
export const mcpHandler = (deps: Deps) => {
  let loaded: Promise<Loaded> | undefined;
  const load = () =>
    (loaded ??= Promise.all([
      import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
      import('./server.ts'),
    ])
      .then(([t, types, s]) => ({
        Transport: t.WebStandardStreamableHTTPServerTransport,
        versions: types.SUPPORTED_PROTOCOL_VERSIONS,
        kit: s.mcpFactory(deps),
      }))
      .catch((e) => {
        loaded = undefined;
        throw e;
      }));

  return async (c: McpContext): Promise<Response> => {
    // Stateless: no session, so no standalone notification stream (GET) and nothing to end (DELETE).
    if (c.req.method !== 'POST') {
      return c.json(
        { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null },
        405,
        { Allow: 'POST' },
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json(
        { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null },
        400,
      );
    }
    const { Transport, versions, kit } = await load();
    if (plainToolCall(c, body, versions)) {
      const result = await kit.callTool(c.get('caller'), body.params.name, body.params.arguments ?? {}, {
        signal: c.req.raw.signal ?? new AbortController().signal,
        sendNotification: async () => {},
      });
      return c.json({ result, jsonrpc: '2.0', id: body.id });
    }
    if (plainToolList(c, body, versions))
      return c.body(`{"result":${kit.toolListJson()},"jsonrpc":"2.0","id":${JSON.stringify(body.id)}}`, 200, {
        'content-type': 'application/json',
      });
    const server = kit.server(c.get('caller'));
    // An answer without progress is one JSON body; only a request that asked for progress (a
    // progress token) gets an event stream to carry the notifications.
    const transport = new Transport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !wantsProgress(body),
    });
    await server.connect(transport);
    // The client hanging up cancels what its request started (closing aborts running handlers).
    c.req.raw.signal?.addEventListener('abort', () => void server.close().catch(() => {}), { once: true });
    return transport.handleRequest(c.req.raw, { parsedBody: body });
  };
};
