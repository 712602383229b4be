/**
 * MCP over HTTP against REST, the same operation: `tools/call get_active_power_plan` on `/mcp`
 * (stateless Streamable HTTP, JSON answer) against `GET /v1/plans/active`, on one server, alternating
 * rounds, autocannon from its own process. Reported: throughput of each, the ratio within each
 * round, and the server's CPU time per request (on a shared machine the steadier figure).
 *
 * Goal: an MCP tool call keeps >= 30% of the REST throughput of the same operation.
 */
import { median, pct, verdict } from './machine.ts';
import { autocannon, cpuMs, type LoadResult } from './processes.ts';

export const MCP_GOAL = 0.3;

const toolCall = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_active_power_plan', arguments: {} },
});

export interface McpVsRest {
  rest: (LoadResult & { cpuUs: number })[];
  mcp: (LoadResult & { cpuUs: number })[];
}

/** Measures both against the server at `base` (process `pid`), `rounds` alternating rounds. */
export const measureMcpVsRest = async (
  base: string,
  pid: number,
  opts: { connections: number; seconds: number; rounds: number },
): Promise<McpVsRest> => {
  const mcp = {
    body: toolCall,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
  };
  const run = async (post?: typeof mcp) => {
    const c0 = await cpuMs(pid);
    const r = await autocannon(post ? `${base}/mcp` : `${base}/v1/plans/active`, { ...opts, post });
    if (r.non2xx || r.errors)
      throw new Error(`${post ? 'MCP' : 'REST'}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { ...r, cpuUs: (((await cpuMs(pid)) - c0) * 1000) / r.requests };
  };
  // Warm-up: the SDK is imported and the tool catalog built on the first MCP request.
  await autocannon(`${base}/mcp`, { connections: opts.connections, seconds: 1, post: mcp });
  await autocannon(`${base}/v1/plans/active`, { connections: opts.connections, seconds: 1 });
  const out: McpVsRest = { rest: [], mcp: [] };
  for (let i = 0; i < opts.rounds; i++) {
    out.rest.push(await run());
    out.mcp.push(await run(mcp));
  }
  return out;
};

export const printMcpVsRest = (backend: string, m: McpVsRest, connections: number): void => {
  const ratios = m.mcp.map((x, i) => x.rps / m.rest[i]!.rps);
  const cpuRatio = median(m.rest.map((x) => x.cpuUs)) / median(m.mcp.map((x) => x.cpuUs));
  console.log(
    `\nMCP tool call over HTTP against REST, same operation (get_active_power_plan), ${connections} connections\n`,
  );
  console.log(
    '| backend | REST req/s | MCP calls/s | MCP / REST (rounds) | server CPU µs/req REST / MCP | CPU ratio REST / MCP | MCP p99 ms | goal (>= 30%) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(
    `| ${[
      backend,
      median(m.rest.map((x) => x.rps)).toFixed(0),
      median(m.mcp.map((x) => x.rps)).toFixed(0),
      `${pct(median(ratios))} (${ratios.map((r) => pct(r, 0)).join(', ')})`,
      `${median(m.rest.map((x) => x.cpuUs)).toFixed(0)} / ${median(m.mcp.map((x) => x.cpuUs)).toFixed(0)}`,
      pct(cpuRatio),
      Math.max(...m.mcp.map((x) => x.p99)).toFixed(1),
      verdict(median(ratios) * 100, MCP_GOAL * 100, '%', true),
    ].join(' | ')} |`,
  );
};
