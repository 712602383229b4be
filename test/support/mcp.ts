/** An MCP client connected in memory to the server a surface would build for `caller`. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Deps } from '../../src/deps.ts';
import { type Caller, localCaller } from '../../src/domain/scopes.ts';
import { createMcpServer } from '../../src/surfaces/mcp/server.ts';

/** Runs `fn` with a connected client, closed afterwards whatever happens. */
export const withMcpClient = async <T>(
  deps: Deps,
  fn: (client: Client) => Promise<T>,
  caller: Caller = localCaller,
): Promise<T> => {
  const server = createMcpServer(deps, caller);
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'powerplan-test', version: '0.0.0' });
  await Promise.all([server.connect(b), client.connect(a)]);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
};
