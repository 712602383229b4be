/**
 * MCP over Streamable HTTP at `/mcp` on the HTTP app: stateless, a new MCP server and transport per
 * request, for the caller the app's auth middleware left on the context. The app's front-door guard
 * (Host, Origin, content type) runs before it, as for every other route. The SDK is imported on the
 * first MCP request, so the REST server and the CLI start without it.
 */
import type { Context } from 'hono';
import type { Deps } from '../../deps.ts';
import type { Caller } from '../../domain/scopes.ts';

export const MCP_PATH = '/mcp';

/** The handler for every method on MCP_PATH; `caller` is set by the authentication before it. */
export const mcpHandler =
  (deps: Deps) =>
  async (c: Context<{ Variables: { caller: Caller } }>): Promise<Response> => {
    // Stateless: no session, so no standalone notification stream (GET) and nothing to end (DELETE).
    if (c.req.method !== 'POST') {
      return c.json(
        { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null },
        405,
        { Allow: 'POST' },
      );
    }
    const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
      import('./server.ts'),
    ]);
    const server = createMcpServer(deps, c.get('caller'));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    // The client hanging up cancels what its request started (closing aborts running handlers).
    c.req.raw.signal?.addEventListener('abort', () => void server.close().catch(() => {}), { once: true });
    return transport.handleRequest(c.req.raw);
  };
