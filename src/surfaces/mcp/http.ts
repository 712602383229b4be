/**
 * MCP over Streamable HTTP at `/mcp` on the REST app: stateless, a new MCP server (over the tool
 * catalog built once) and transport per request, for the caller the auth middleware left on the
 * context. A Host/Origin guard against DNS rebinding comes first (the SDK's own guard is Express-only). The SDK is imported on the first
 * MCP request, so the REST server and the CLI start without it.
 */
import { hostname, networkInterfaces } from 'node:os';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import { localCaller } from '../../domain/scopes.ts';
import { toProblem } from '../errors.ts';
import type { AppEnv } from '../http/app.ts';

export const MCP_PATH = '/mcp';

const loopbackNames = ['localhost', '127.0.0.1', '::1'];
const wildcard = (host: string) => host === '0.0.0.0' || host === '::' || host === '[::]';
const bare = (host: string) => host.toLowerCase().replace(/^\[(.*)\]$/, '$1');

/**
 * Host names a legitimate request may carry: loopback, the configured host, and when listening on
 * every interface, this machine's name and addresses (a rebinding page cannot claim those names).
 */
export const allowedHostnames = (config: Pick<Config, 'host'>): Set<string> => {
  const names = new Set([...loopbackNames, bare(config.host)]);
  if (wildcard(config.host)) {
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) names.add(bare(a.address.replace(/%.*$/, '')));
    }
  }
  return names;
};

/** The host name of a Host header value (`name`, `name:port`, `[v6]:port`), or undefined. */
const hostOf = (header: string): string | undefined => {
  try {
    return bare(new URL(`http://${header}`).hostname);
  } catch {
    return undefined;
  }
};

const originHost = (origin: string): string | undefined => {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? bare(url.hostname) : undefined;
  } catch {
    return undefined;
  }
};

const refuse = (c: Context, detail: string): Response =>
  c.body(JSON.stringify(toProblem(new PowerPlanError('forbidden', detail))), 403, {
    'content-type': 'application/problem+json',
  });

/**
 * Refuses (403) a token-less request whose Host, or Origin when present, names another site: the
 * loopback service must not answer a web page that rebinds its own name to 127.0.0.1.
 */
export const dnsRebindingGuard = (config: Pick<Config, 'host'>): MiddlewareHandler<AppEnv> => {
  const allowed = allowedHostnames(config);
  const ok = (name: string | undefined) =>
    name !== undefined && (allowed.has(name) || /^127\.\d+\.\d+\.\d+$/.test(name));
  return async (c, next) => {
    // A rebinding page rides on the browser, which never adds a bearer token by itself: a caller
    // that presented one may use any name for this host (a DNS name, a proxy), e.g. remote access.
    if (c.get('caller').name !== localCaller.name) return next();
    const host = c.req.header('host');
    if (!ok(host === undefined ? undefined : hostOf(host))) {
      return refuse(c, `Host '${host ?? ''}' is not accepted for ${MCP_PATH} (DNS rebinding guard).`);
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !ok(originHost(origin))) {
      return refuse(c, `Origin '${origin}' is not accepted for ${MCP_PATH} (DNS rebinding guard).`);
    }
    await next();
  };
};

/** The SDK and the MCP catalog, loaded on the first MCP request and kept: a request builds only its server. */
type Loaded = {
  Transport: typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js').WebStandardStreamableHTTPServerTransport;
  versions: readonly string[];
  kit: import('./server.ts').McpKit;
};

type ToolCall = {
  jsonrpc: '2.0';
  id: string | number;
  method: 'tools/call';
  params: { name: string; arguments?: object };
};

/**
 * A single `tools/call` without a progress token, in headers the transport would accept: answered
 * directly as one JSON body through the same tool call as the SDK's handler. Everything else
 * (initialize, lists, prompts, batches, progress, bad headers) goes through the SDK's transport.
 */
const plainToolCall = (c: Context<AppEnv>, body: unknown, versions: readonly string[]): body is ToolCall => {
  const m = body as Partial<ToolCall> & { params?: { _meta?: unknown; arguments?: unknown } };
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return false;
  if (m.jsonrpc !== '2.0' || m.method !== 'tools/call') return false;
  if (!(typeof m.id === 'string' || (typeof m.id === 'number' && Number.isInteger(m.id)))) return false;
  const p = m.params;
  if (!p || typeof p !== 'object' || typeof p.name !== 'string' || p._meta !== undefined) return false;
  if (
    p.arguments !== undefined &&
    (p.arguments === null || typeof p.arguments !== 'object' || Array.isArray(p.arguments))
  )
    return false;
  const accept = c.req.header('accept') ?? '';
  const version = c.req.header('mcp-protocol-version');
  return (
    accept.includes('application/json') &&
    accept.includes('text/event-stream') &&
    /^application\/json\s*(;|$)/i.test(c.req.header('content-type') ?? '') &&
    (version === undefined || versions.includes(version))
  );
};

const wantsProgress = (body: unknown): boolean =>
  (Array.isArray(body) ? body : [body]).some(
    (m) =>
      (m as { params?: { _meta?: { progressToken?: unknown } } } | null)?.params?._meta?.progressToken !==
      undefined,
  );

const handle = async (c: Context<AppEnv>, load: () => Promise<Loaded>): Promise<Response> => {
  // Stateless: no session, so no standalone notification stream (GET) and nothing to end (DELETE).
  if (c.req.method !== 'POST') {
    return c.json(
      { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null },
      405,
      {
        Allow: 'POST',
      },
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
    const signal = c.req.raw.signal ?? new AbortController().signal;
    const result = await kit.callTool(c.get('caller'), body.params.name, body.params.arguments ?? {}, {
      signal,
      sendNotification: async () => {},
    });
    return c.json({ result, jsonrpc: '2.0', id: body.id });
  }
  const server = kit.server(c.get('caller'));
  // An answer without progress is one JSON body; only a request that asked for progress (a progress
  // token) gets an event stream to carry the notifications.
  const transport = new Transport({
    sessionIdGenerator: undefined,
    enableJsonResponse: !wantsProgress(body),
  });
  await server.connect(transport);
  // The client hanging up cancels what its request started (closing aborts running handlers).
  c.req.raw.signal?.addEventListener('abort', () => void server.close().catch(() => {}), { once: true });
  return transport.handleRequest(c.req.raw, { parsedBody: body });
};

/** Mounts `/mcp` (guard + handler) on the app; call it before the operation routes. */
export const mountMcp = (app: Hono<AppEnv>, deps: Deps): void => {
  app.use(MCP_PATH, dnsRebindingGuard(deps.config));
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
  app.all(MCP_PATH, (c) => handle(c, load));
};
