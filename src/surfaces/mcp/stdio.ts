/**
 * `powerplan mcp`: the MCP server over stdin/stdout, for the local caller (an assistant that
 * starts the command itself). Streamable HTTP is in http.ts; both serve createMcpServer's tools.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Deps } from '../../deps.ts';
import { localCaller } from '../../domain/scopes.ts';
import { createMcpServer } from './server.ts';

/**
 * `powerplan mcp`: serves the local caller over stdin/stdout. stdout carries only protocol
 * messages (the logger writes to stderr); the process ends when the client closes stdin.
 */
export const serveMcpStdio = async (deps: Deps): Promise<void> => {
  const server = createMcpServer(deps, localCaller);
  const transport = new StdioServerTransport();
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    deps.log.info('mcp stdio stopping', { reason });
    // A cancelled plan change or comparison puts the original plan back first (deps.stop waits).
    await deps.stop();
    await server.close().catch(() => {});
    process.exit(0);
  };
  process.stdin.once('end', () => void stop('stdin closed'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  await deps.start();
  await server.connect(transport);
  deps.log.info('mcp stdio ready', { backend: deps.backend.name });
};
