/**
 * API overhead: `GET /v1/plans/active` against a bare Hono route answering the same body in the same
 * server process (perf/server.ts), on the simulated backend and on the Windows backend over the
 * powercfg emulator. autocannon runs as its own process, 50 connections. The two routes alternate
 * (bare, api, bare, api, ...) so that drift in the machine's load hits both alike; the figures are
 * ratios within a round. The server's CPU time per request (from /proc) is reported too: on a
 * machine shared with other work, throughput depends on the share the scheduler gives, CPU time
 * per request much less.
 *
 *   npm run perf:api -- [--seconds 5] [--rounds 2] [--connections 50] [--backends simulated,windows]
 *                       [--v8-flags service|none] [--v8-flags='<flags>']
 *
 * The server runs with the V8 flags the service ships with (deploy/v8-flags.json: a 1-MiB young
 * generation, garbage collected on the service's own thread), unless `--v8-flags none` gives it
 * V8's defaults or `--v8-flags='--max-semi-space-size=4 ...'` other flags (joined by `=`: Node's
 * parseArgs takes a value that starts with `-` for an option of its own). Both routes run in the
 * same process, so the flags weigh on each by what it allocates.
 *
 * Goals, as ratios to the bare route in the same run: `/healthz` (every middleware, a trivial
 * handler) >= 0.80 of its throughput, `GET /v1/plans/active` >= 0.50; the API p99 stays under 10 ms.
 * A further section (perf/lib/mcp-load.ts) measures an MCP tool call over HTTP against the same
 * REST read: goal >= 30% of its throughput.
 */
import { join } from 'node:path';
import { v8Flags } from '../scripts/lib/start-points.mjs';
import { perfArgs } from './lib/args.ts';
import { footer, header, median, verdict } from './lib/machine.ts';
import { measureMcpVsRest, printMcpVsRest } from './lib/mcp-load.ts';
import {
  autocannon,
  cpuMs,
  type LoadResult,
  peakMiB,
  repoRoot,
  rssMiB,
  startProcess,
} from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    backends: { type: 'string', default: 'simulated,windows' },
    'v8-flags': { type: 'string', default: 'service' },
  },
});
/** The server's node options before its script: `--v8-flags service`, `none`, or the flags themselves. */
const flagsOf = (choice: string): string[] => {
  if (choice === 'service') return v8Flags();
  if (choice === 'none') return [];
  if (choice.startsWith('--')) return choice.split(/\s+/);
  throw new Error(`--v8-flags: service, none or the flags themselves, not ${choice}`);
};
const nodeFlags = flagsOf(values['v8-flags']);
const seconds = Number(values.seconds);
const rounds = Math.max(1, Math.trunc(Number(values.rounds)));
const connections = Number(values.connections);

header('API overhead: GET /v1/plans/active against a bare Hono route in the same process');
console.log(
  `autocannon -c ${connections} -d ${seconds} from its own process; ${rounds} alternating rounds; ` +
    `server V8 flags: ${nodeFlags.length ? nodeFlags.join(' ') : "V8's defaults"}${values['v8-flags'] === 'service' ? " (the service's, deploy/v8-flags.json)" : ''}\n`,
);

type Measured = LoadResult & { cpuUsPerRequest: number };

interface Row {
  backend: string;
  bare: Measured[];
  /** /healthz of the real app: every middleware, a trivial handler. */
  stack: Measured[];
  api: Measured[];
}

const rows: Row[] = [];
for (const backend of values.backends.split(',')) {
  const server = await startProcess([
    ...nodeFlags,
    '--import',
    'tsx',
    join(repoRoot, 'perf', 'server.ts'),
    '--backend',
    backend,
  ]);
  try {
    const bareUrl = `${server.url}/bare`;
    const apiUrl = `${server.url}/v1/plans/active`;
    const stackUrl = `${server.url}/healthz`;
    // Warm-up: JIT, caches, connection pools.
    await autocannon(bareUrl, { connections, seconds: 1 });
    await autocannon(apiUrl, { connections, seconds: 1 });
    await autocannon(stackUrl, { connections, seconds: 1 });
    const pid = server.child.pid!;
    const measure = async (url: string): Promise<Measured> => {
      const cpu0 = await cpuMs(pid);
      const r = await autocannon(url, { connections, seconds });
      return { ...r, cpuUsPerRequest: (((await cpuMs(pid)) - cpu0) * 1000) / r.requests };
    };
    const row: Row = { backend, bare: [], stack: [], api: [] };
    for (let i = 0; i < rounds; i++) {
      row.bare.push(await measure(bareUrl));
      row.stack.push(await measure(stackUrl));
      row.api.push(await measure(apiUrl));
    }
    for (const r of [...row.bare, ...row.stack, ...row.api]) {
      if (r.non2xx || r.errors)
        throw new Error(`${backend}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    }
    rows.push(row);
  } finally {
    await server.stop();
  }
}

console.log(
  '| backend | bare req/s | /healthz req/s | API req/s | /healthz / bare | API / bare | server CPU µs/req: bare / /healthz / API | bare p99 ms | API p99 ms | API p50 ms | /healthz goal (>= 0.80) | API goal (>= 0.50) | p99 goal (< 10 ms) |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const ratiosOf = (xs: Measured[]) => xs.map((a, i) => a.rps / r.bare[i]!.rps);
  const stackRatios = ratiosOf(r.stack);
  const apiRatios = ratiosOf(r.api);
  const stackRatio = median(stackRatios);
  const apiRatio = median(apiRatios);
  const apiP99 = Math.max(...r.api.map((a) => a.p99));
  const cpu = (xs: Measured[]) => median(xs.map((x) => x.cpuUsPerRequest)).toFixed(0);
  const rounds = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
  const line = [
    r.backend,
    median(r.bare.map((x) => x.rps)).toFixed(0),
    median(r.stack.map((x) => x.rps)).toFixed(0),
    median(r.api.map((x) => x.rps)).toFixed(0),
    `${stackRatio.toFixed(2)} (rounds: ${rounds(stackRatios)})`,
    `${apiRatio.toFixed(2)} (rounds: ${rounds(apiRatios)})`,
    `${cpu(r.bare)} / ${cpu(r.stack)} / ${cpu(r.api)}`,
    Math.max(...r.bare.map((x) => x.p99)).toFixed(1),
    apiP99.toFixed(1),
    median(r.api.map((x) => x.p50)).toFixed(1),
    verdict(stackRatio * 100, 80, '%', true),
    verdict(apiRatio * 100, 50, '%', true),
    apiP99 < 10 ? 'met' : verdict(apiP99, 10, ' ms'),
  ];
  console.log(`| ${line.join(' | ')} |`);
}

// MCP over HTTP against REST: the same operation on the same server, simulated backend.
{
  const mcpConnections = 20;
  const server = await startProcess([...nodeFlags, '--import', 'tsx', join(repoRoot, 'perf', 'server.ts')]);
  try {
    const m = await measureMcpVsRest(server.url, server.child.pid!, {
      connections: mcpConnections,
      seconds,
      rounds,
    });
    printMcpVsRest('simulated', m, mcpConnections);
    const pid = server.child.pid!;
    const peak = await peakMiB(pid);
    console.log(
      `\nServer memory after the MCP rounds (sources via tsx; perf:footprint measures the bundle): ` +
        `${(await rssMiB(pid)).toFixed(1)} MiB resident, peak ${peak.toFixed(1)} MiB: goal < 200 MiB ${verdict(peak, 200, ' MiB')}.`,
    );
  } finally {
    await server.stop();
  }
}
footer();
