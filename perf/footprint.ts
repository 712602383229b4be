/**
 * Footprint: how fast `powerplan serve` answers its first /healthz and the CLI read commands finish,
 * against plain Node doing the least it can in the same run (a bare http server; `node -e 0`), from
 * the bundle (dist/, what `npm install` builds) and from the TypeScript sources (tsx); and the
 * server's resident memory idle and after 10,000, 20,000 and 30,000 requests.
 *
 *   npm run perf:footprint -- [--runs 5] [--requests 10000]
 *
 * Goals: first /healthz under 400 ms; CLI reads under 250 ms; resident memory under 80 MB with no
 * growth between 10,000 and 30,000 requests.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { minimalEnv, runProcess } from '../scripts/lib/serve.mjs';
import { perfArgs } from './lib/args.ts';
import { footer, header, median, verdict } from './lib/machine.ts';
import { autocannon, peakMiB, repoRoot, rssMiB, startProcess } from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    runs: { type: 'string', default: '5' },
    requests: { type: 'string', default: '10000' },
    'mcp-calls': { type: 'string', default: '20000' },
    'mcp-connections': { type: 'string', default: '100' },
    'memory-only': { type: 'boolean', default: false },
  },
});
const runs = Math.max(1, Math.trunc(Number(values.runs)));
const requests = Math.max(1, Math.trunc(Number(values.requests)));
const mcpCalls = Math.max(1, Math.trunc(Number(values['mcp-calls'])));
const mcpConnections = Math.max(1, Math.trunc(Number(values['mcp-connections'])));
const bin = join(repoRoot, 'bin', 'powerplan.js');

/** The V8 flags `npm start` gives node (package.json), the same the service files use. */
const productFlags = (): string[] => {
  const start: string = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).scripts.start;
  return start.split(/\s+/).filter((w) => w.startsWith('--'));
};

header('Footprint: start-up, CLI wall time, resident memory');

/** The same test bin/powerplan.js makes: is the bundle newer than every file it was built from? */
const bundleFresh = async (): Promise<boolean> => {
  try {
    const manifest = JSON.parse(await readFile(join(repoRoot, 'dist', 'powerplan.meta.json'), 'utf8'));
    for (const input of manifest.inputs as string[]) {
      if ((await stat(join(repoRoot, input))).mtimeMs >= manifest.builtAt) return false;
    }
    return true;
  } catch {
    return false;
  }
};

// Figures for the current sources: build the bundle first.
await new Promise<void>((resolve, reject) => {
  const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`build failed: ${code}`))));
});
if (!(await bundleFresh())) throw new Error('dist/ is not up to date after the build');

const stateDir = await mkdtemp(join(tmpdir(), 'powerplan-bench-footprint-'));
const env = (fromSource: boolean): Record<string, string> => ({
  POWERPLAN_STATE_DIR: stateDir,
  POWERPLAN_BACKEND: 'simulated',
  POWERPLAN_LOG_LEVEL: 'warn',
  POWERPLAN_PORT: '0',
  ...(fromSource ? { POWERPLAN_FROM_SOURCE: '1' } : {}),
});

/** Spawn to exit, in ms. */
const wall = async (args: string[], e: Record<string, string>): Promise<number> => {
  const t0 = performance.now();
  const r = await runProcess(process.execPath, args, { cwd: repoRoot, env: { ...minimalEnv(), ...e } });
  if (r.code !== 0) throw new Error(`${args.join(' ')}: exit ${r.code} ${r.stderr}`);
  return performance.now() - t0;
};

/** Spawn to the first 200 from /healthz, in ms. */
const firstHealthz = async (args: string[], e: Record<string, string>): Promise<number> => {
  const t0 = performance.now();
  const server = await startProcess(args, e);
  try {
    for (;;) {
      const ok = await fetch(`${server.url}/healthz`)
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) return performance.now() - t0;
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await server.stop();
  }
};

interface Timing {
  what: string;
  reference: string;
  ref: number[];
  bundle: number[];
  source: number[];
  goalMs: number;
}
const timings: Timing[] = [
  {
    what: 'serve: spawn to first /healthz',
    reference: 'bare node http server',
    ref: [],
    bundle: [],
    source: [],
    goalMs: 400,
  },
  ...['active', 'plans', 'system'].map((cmd) => ({
    what: `powerplan ${cmd}`,
    reference: 'node -e 0',
    ref: [],
    bundle: [],
    source: [],
    goalMs: 250,
  })),
];
// Interleaved, so that drift in the machine's load hits every variant alike.
const timed = values['memory-only'] ? 0 : runs;
for (let i = 0; i < timed; i++) {
  const serve = timings[0]!;
  serve.ref.push(await firstHealthz([join(repoRoot, 'perf', 'lib', 'bare-server.mjs')], {}));
  serve.bundle.push(await firstHealthz([bin, 'serve'], env(false)));
  serve.source.push(await firstHealthz([bin, 'serve'], env(true)));
  for (const t of timings.slice(1)) {
    const cmd = t.what.split(' ')[1]!;
    t.ref.push(await wall(['-e', '0'], {}));
    t.bundle.push(await wall([bin, cmd], env(false)));
    t.source.push(await wall([bin, cmd], env(true)));
  }
}
const bundleStillFresh = await bundleFresh();

if (timed) {
  console.log(`Median of ${runs} runs each, interleaved. "x ref" = median / median of the reference.\n`);
  console.log(
    '| what | reference (ms) | bundle ms (x ref) | sources via tsx ms (x ref) | goal | bundle: goal |',
  );
  console.log('|---|---|---|---|---|---|');
}
for (const t of timed ? timings : []) {
  const ref = median(t.ref);
  const b = median(t.bundle);
  const s = median(t.source);
  console.log(
    `| ${t.what} | ${t.reference}: ${ref.toFixed(0)} | ${b.toFixed(0)} (${(b / ref).toFixed(2)}) | ${s.toFixed(0)} (${(s / ref).toFixed(2)}) | < ${t.goalMs} ms | ${verdict(b, t.goalMs, ' ms')} |`,
  );
}
if (!bundleStillFresh)
  console.log(
    '\nWarning: a source file changed during the run; some "bundle" runs may have run from source.',
  );

// Resident memory, idle and under repeated load: the server (the bundle) as the product starts it
// (the V8 flags of `npm start`), the same without them, and as the reference the bare node http
// server under the same load; then MCP over HTTP: `tools/list` (the largest answer) from many
// clients at once.
const memoryOf = async (args: string[], e: Record<string, string>, path: string) => {
  const server = await startProcess(args, e);
  const pid = server.child.pid!;
  const rss: number[] = [];
  try {
    await new Promise((r) => setTimeout(r, 1000));
    rss.push(await rssMiB(pid));
    for (let k = 1; k <= 3; k++) {
      const r = await autocannon(`${server.url}${path}`, { connections: 50, amount: requests });
      if (r.non2xx || r.errors) throw new Error(`${r.non2xx} non-2xx answers, ${r.errors} errors`);
      await new Promise((res) => setTimeout(res, 1000));
      rss.push(await rssMiB(pid));
    }
    await new Promise((r) => setTimeout(r, 5000));
    rss.push(await rssMiB(pid));
    return { rss, peak: await peakMiB(pid) };
  } finally {
    await server.stop();
  }
};

/** MCP `tools/list` over HTTP, `mcpCalls` calls from `mcpConnections` connections at once. */
const mcpMemory = async (args: string[], e: Record<string, string>) => {
  const server = await startProcess(args, e);
  const pid = server.child.pid!;
  try {
    const post = {
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
    };
    // The first MCP request loads the SDK and builds the catalog.
    await autocannon(`${server.url}/mcp`, { connections: 1, amount: 1, post });
    await new Promise((r) => setTimeout(r, 1000));
    const before = await rssMiB(pid);
    // On a loaded machine 100 clients of a 130-KB answer wait long: a generous timeout.
    const r = await autocannon(`${server.url}/mcp`, {
      connections: mcpConnections,
      amount: mcpCalls,
      post,
      timeout: 120,
    });
    if (r.non2xx || r.errors) throw new Error(`MCP: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
    const loaded = await rssMiB(pid);
    await new Promise((res) => setTimeout(res, 5000));
    return { before, loaded, idle: await rssMiB(pid), peak: await peakMiB(pid), rps: r.rps };
  } finally {
    await server.stop();
  }
};

const flags = productFlags();
const service = await memoryOf([...flags, bin, 'serve'], env(false), '/v1/plans/active');
const noFlags = await memoryOf([bin, 'serve'], env(false), '/v1/plans/active');
const bare = await memoryOf([join(repoRoot, 'perf', 'lib', 'bare-server.mjs')], {}, '/healthz');
const mcp = await mcpMemory([...flags, bin, 'serve'], env(false));
await rm(stateDir, { recursive: true, force: true });

const n = (k: number) => (k * requests).toLocaleString('en-US');
const when = [
  'idle, 1 s after start',
  `after ${n(1)} requests`,
  `after ${n(2)} requests`,
  `after ${n(3)} requests`,
  'idle 5 s later',
];
console.log(
  `\n| resident MiB, 50 connections | powerplan serve (bundle) with ${flags.join(' ') || 'no flags'} (npm start), GET /v1/plans/active | the same without V8 flags | bare node http server, same load |`,
);
console.log('|---|---|---|---|');
for (const [i, w] of when.entries())
  console.log(
    `| ${w} | ${service.rss[i]!.toFixed(1)} | ${noFlags.rss[i]!.toFixed(1)} | ${bare.rss[i]!.toFixed(1)} |`,
  );
console.log(
  `| peak (VmHWM) | ${service.peak.toFixed(1)} | ${noFlags.peak.toFixed(1)} | ${bare.peak.toFixed(1)} |`,
);
const idle = service.rss[0]!;
const first = service.rss[1]!;
const last = service.rss[3]!;
const loaded = Math.max(...service.rss.slice(1));
console.log(
  `\nIdle ${idle.toFixed(1)} MiB: goal < 80 MiB ${verdict(idle, 80, ' MiB')}. ` +
    `Under load up to ${loaded.toFixed(1)} MiB: goal < 100 MiB ${verdict(loaded, 100, ' MiB')}. ` +
    `From ${n(1)} to ${n(3)} requests: ${(last - first).toFixed(1)} MiB (${(((last - first) / first) * 100).toFixed(1)}%): ` +
    `${Math.abs(last - first) <= first * 0.05 ? 'flat (within 5%)' : 'moves by more than 5%'}.`,
);
console.log(
  `\n| MCP tools/list over HTTP, ${mcpCalls.toLocaleString('en-US')} calls, ${mcpConnections} at once | resident MiB |\n|---|---|\n` +
    `| after the first call (SDK loaded, catalog built) | ${mcp.before.toFixed(1)} |\n` +
    `| right after the calls (${mcp.rps.toFixed(0)} calls/s) | ${mcp.loaded.toFixed(1)} |\n` +
    `| idle 5 s later | ${mcp.idle.toFixed(1)} |\n` +
    `| peak (VmHWM) | ${mcp.peak.toFixed(1)} |`,
);
console.log(`\nMCP peak ${mcp.peak.toFixed(1)} MiB: goal < 200 MiB ${verdict(mcp.peak, 200, ' MiB')}.`);
footer();
