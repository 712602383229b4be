/**
 * MCP over HTTP against REST, the same operation: `tools/call get_active_power_plan` on `/mcp`
 * (stateless Streamable HTTP, JSON answer) against `GET /v1/plans/active`, on one server, alternating
 * rounds, autocannon from its own process. Reported: throughput of each, the ratio within each
 * round, and the server's CPU time per request (on a shared machine the steadier figure).
 *
 * Goal: an MCP tool call keeps >= 30% of the REST throughput of the same operation.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median, pct, verdict } from './machine.ts';
import { cpuMs, type LoadResult, repoRoot } from './processes.ts';

const execFileP = promisify(execFile);
const autocannonCli = join(repoRoot, 'node_modules', 'autocannon', 'autocannon.js');

export const MCP_GOAL = 0.3;

const toolCall = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_active_power_plan', arguments: {} },
});

/** autocannon with a method, headers and a body (the shared helper does GETs only). */
const load = async (
  url: string,
  opts: { connections: number; seconds: number; post?: { body: string; headers: Record<string, string> } },
): Promise<LoadResult> => {
  const args = [autocannonCli, '--json', '-c', String(opts.connections), '-d', String(opts.seconds)];
  if (opts.post) {
    args.push('-m', 'POST', '-b', opts.post.body);
    for (const [k, v] of Object.entries(opts.post.headers)) args.push('-H', `${k}=${v}`);
  }
  const { stdout } = await execFileP(process.execPath, [...args, url], { maxBuffer: 64 * 1024 * 1024 });
  const r = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
  };
};

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
    const r = await load(post ? `${base}/mcp` : `${base}/v1/plans/active`, { ...opts, post });
    if (r.non2xx || r.errors)
      throw new Error(`${post ? 'MCP' : 'REST'}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { ...r, cpuUs: (((await cpuMs(pid)) - c0) * 1000) / r.requests };
  };
  // Warm-up: the SDK is imported and the tool catalog built on the first MCP request.
  await load(`${base}/mcp`, { connections: opts.connections, seconds: 1, post: mcp });
  await load(`${base}/v1/plans/active`, { connections: opts.connections, seconds: 1 });
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
