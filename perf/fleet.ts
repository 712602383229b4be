/**
 * Fleet status two ways, in one run:
 *
 * 1. From Prometheus, at scale: 10,000 simulated hosts' scrapes (perf/lib/fleet-sim.ts) written as
 *    OpenMetrics, loaded with `promtool tsdb create-blocks-from openmetrics` into a fresh data
 *    directory, a real Prometheus started on it (loopback, random port, no scraping), and
 *    `powerplan fleet status --json` run as its own process from the bundle (the bin run as
 *    installed, with the V8 flags of its #! line) against a fleet file naming that Prometheus:
 *    wall time, the CLI's CPU time and peak resident memory (`/usr/bin/time`),
 *    Prometheus' CPU time for the same call, and the answer checked host by host. Then the same
 *    status from a running `powerplan serve` (the bin, with the V8 flags of its #! line), its peak memory.
 * 2. The fan-out over 50 live agents in this process (real HTTP servers on loopback, port 0,
 *    simulated backend, each with its own state directory and token file), a fleet file naming
 *    them, and `get_fleet_status` through a fresh fleet service per round (no cached answer, new
 *    connections: the cold case). The reference, measured in the same run, is the status of one
 *    agent; per-host overhead is what each further host adds.
 *
 *   npm run perf:fleet -- [--hosts 50] [--rounds 5] [--concurrency 16] [--sim-hosts 10000] [--sim-rounds 5]
 *                         [--before DIR] [--no-fan-out]
 *
 * With --before, a checkout of an earlier version (built with its `npm run build`) is measured in
 * the same run, round for round beside this one: its CLI, its service, and the size of its MCP
 * get_fleet_status answer (every page of this version's, the first of the earlier one's).
 *
 * Goals: 10,000 hosts from Prometheus in under 2 s with the asking process under 150 MiB; the
 * status of 50 agents in under 1.5 s.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startServing } from '../scripts/lib/serve.mjs';
import { loadConfig } from '../src/config.ts';
import { buildDeps } from '../src/deps.ts';
import { FleetHostStatus, FleetStatus } from '../src/domain/fleet.ts';
import { createLogger } from '../src/lib/log.ts';
import { createToken } from '../src/lib/tokens.ts';
import { FleetService } from '../src/services/fleet/fleet.ts';
import { startHttpServer } from '../src/surfaces/http/server.ts';
import { startPrometheus } from '../test/support/prometheus.ts';
import { perfArgs } from './lib/args.ts';
import { createBlocks, simHost, writeOpenMetrics } from './lib/fleet-sim.ts';
import { footer, header, loadAverage, median, verdict } from './lib/machine.ts';
import { cpuMs, repoRoot } from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    hosts: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    'sim-hosts': { type: 'string', default: '10000' },
    'sim-rounds': { type: 'string', default: '5' },
    before: { type: 'string' },
    'no-fan-out': { type: 'boolean', default: false },
  },
});
/** The trees measured: this one, and the earlier checkout when given. */
const trees = [
  { label: 'after', root: repoRoot, all: ['--all'] },
  // An earlier version that pages its answers (it has src/operations/fleet-page.ts) is asked for every page.
  ...(values.before
    ? [
        {
          label: 'before',
          root: values.before,
          all: existsSync(join(values.before, 'src', 'operations', 'fleet-page.ts')) ? ['--all'] : [],
        },
      ]
    : []),
];
type Tree = (typeof trees)[number];
const count = Number(values.hosts);
const rounds = Number(values.rounds);
const GOAL_MS = 1500;
const simCount = Number(values['sim-hosts']);
const simRounds = Number(values['sim-rounds']);
const SIM_GOAL_MS = 2000;
const SIM_GOAL_MIB = 150;
const log = createLogger('silent');
const secret = async (path: string, text: string) => {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
};

header(
  `Fleet status of ${simCount.toLocaleString('en')} simulated hosts from Prometheus, and of ${count} live agents (fan-out)`,
);

// ---- 1. From Prometheus -------------------------------------------------------------------

// The CLI runs from the bundle, as installed: build it for the current sources.
await new Promise<void>((resolve, reject) => {
  const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'build.mjs')], { stdio: 'ignore' });
  child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`build failed: ${code}`))));
});

const simDir = await mkdtemp(join(tmpdir(), 'powerplan-bench-prometheus-'));
const endS = Math.floor(Date.now() / 1000) - 10;
let t0 = performance.now();
const lines = await writeOpenMetrics(join(simDir, 'fleet.om'), simCount, endS);
const omBytes = (await stat(join(simDir, 'fleet.om'))).size;
const writeMs = performance.now() - t0;
t0 = performance.now();
await createBlocks(join(simDir, 'fleet.om'), join(simDir, 'data'));
const blocksMs = performance.now() - t0;
await rm(join(simDir, 'fleet.om'));
const prometheus = await startPrometheus(simDir, 'global: {}\n', { dataDir: join(simDir, 'data') });
const simFleet = join(simDir, 'fleet.json');
await secret(simFleet, JSON.stringify({ prometheus: { url: prometheus.url } }));
console.log(
  `Simulated: ${simCount} hosts, ${lines.toLocaleString('en')} OpenMetrics lines (${(omBytes / 2 ** 20).toFixed(0)} MiB) ` +
    `written in ${(writeMs / 1000).toFixed(1)} s, loaded by promtool tsdb create-blocks-from openmetrics in ${(blocksMs / 1000).toFixed(1)} s.\n`,
);

/** The answer, checked against what the simulation wrote for every host. */
const check = (answer: { hosts: unknown }) => {
  // Host by host in this version's shape (an earlier version's answer has no page fields).
  const s = { hosts: z.array(FleetHostStatus).parse(answer.hosts) };
  const byName = new Map(s.hosts.map((h) => [h.name, h]));
  let ok = 0;
  for (let i = 0; i < simCount; i++) {
    const want = simHost(i);
    const got = byName.get(want.name);
    const status = want.state === 'ok' ? 'ok' : 'unreachable';
    if (!got || got.status !== status || (status === 'ok' && got.plan?.id !== want.plan.id))
      throw new Error(`${want.name}: expected ${status} on ${want.plan.kind}, got ${JSON.stringify(got)}`);
    if (status !== 'ok' && !got.lastSampleAt) throw new Error(`${want.name}: no last sample time`);
    if (status === 'ok') ok++;
  }
  if (s.hosts.length !== simCount) throw new Error(`${s.hosts.length} hosts answered, ${simCount} simulated`);
  return ok;
};

const cliEnv = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  POWERPLAN_STATE_DIR: join(simDir, 'cli'),
  POWERPLAN_BACKEND: 'simulated',
  POWERPLAN_FLEET_TIMEOUT_MS: '60000',
};
/** A Markdown table: its header row, the separator, the rows. */
const printTable = (head: string, rows: string[]) => {
  console.log(head);
  console.log(`|${'---|'.repeat(head.split('|').length - 2)}`);
  for (const row of rows) console.log(row);
};

/** One `powerplan fleet status --json` (every page) as its own process, the bin run as installed, under /usr/bin/time. */
const cliOnce = (tree: Tree) =>
  new Promise<{ wallMs: number; cpuMs: number; maxRssMiB: number; promCpuMs: number; ok: number }>(
    (resolve, reject) => {
      void cpuMs(prometheus.child.pid!).then((promBefore) => {
        const started = performance.now();
        execFile(
          '/usr/bin/time',
          [
            '-f',
            'TIME %U %S %M',
            // The bin itself, as an installed `powerplan` starts: with the V8 flags of its #! line
            // (and the first node on PATH, as env finds it).
            join(tree.root, 'bin', 'powerplan.js'),
            'fleet',
            'status',
            '--fleet',
            simFleet,
            '--json',
            ...tree.all,
          ],
          { env: cliEnv, maxBuffer: 256 * 1024 * 1024, cwd: tree.root },
          async (err, stdout, stderr) => {
            const wallMs = performance.now() - started;
            if (err) return reject(new Error(`fleet status failed: ${stderr}`));
            const m = /TIME (\S+) (\S+) (\d+)/.exec(stderr);
            if (!m) return reject(new Error(`no figures from /usr/bin/time: ${stderr}`));
            try {
              resolve({
                wallMs,
                cpuMs: (Number(m[1]) + Number(m[2])) * 1000,
                maxRssMiB: Number(m[3]) / 1024,
                promCpuMs: (await cpuMs(prometheus.child.pid!)) - promBefore,
                ok: check(JSON.parse(stdout)),
              });
            } catch (e) {
              reject(e);
            }
          },
        );
      });
    },
  );

for (const tree of trees) await cliOnce(tree); // warm-up: Prometheus' caches, the page cache
const cli = new Map(trees.map((tree) => [tree.label, [] as Awaited<ReturnType<typeof cliOnce>>[]]));
// Round for round, the trees in turn: the same machine load for both.
for (let i = 0; i < simRounds; i++) for (const tree of trees) cli.get(tree.label)!.push(await cliOnce(tree));
const cliAfter = cli.get('after')!;
console.log(
  `${simRounds} rounds after one warm-up, ${trees.map((t) => t.label).join(' and ')} in turn; every host's status and plan checked against the simulation (${cliAfter[0]!.ok} ok, ${simCount - cliAfter[0]!.ok} unreachable)\n`,
);
printTable(
  '| hosts | version | how | wall ms (median) | rounds ms | asking process CPU ms | Prometheus CPU ms | asking process peak RSS MiB | goal (< 2 s, < 150 MiB) |',
  trees.map((tree) => {
    const runs = cli.get(tree.label)!;
    const wall = median(runs.map((c) => c.wallMs));
    const peak = Math.max(...runs.map((c) => c.maxRssMiB));
    return `| ${simCount} | ${tree.label} | \`powerplan fleet status --json${tree.all.length ? ' --all' : ''}\` (the bin as installed, its #! flags; the bundle) | ${wall.toFixed(0)} | ${runs.map((c) => c.wallMs.toFixed(0)).join(', ')} | ${median(runs.map((c) => c.cpuMs)).toFixed(0)} | ${median(runs.map((c) => c.promCpuMs)).toFixed(0)} | ${peak.toFixed(0)} | ${verdict(wall, SIM_GOAL_MS, ' ms')}; ${verdict(peak, SIM_GOAL_MIB, ' MiB')} |`;
  }),
);
/** The MCP get_fleet_status answer as a client receives it (text and structured content), in process. */
const mcpAnswer = async (tree: Tree) => {
  const src = (p: string) => import(join(tree.root, 'src', p));
  const [{ loadConfig: load }, { buildDeps: build }, { mcpFactory }, { localCaller }] = await Promise.all([
    src('config.ts'),
    src('deps.ts'),
    src('surfaces/mcp/server.ts'),
    src('domain/scopes.ts'),
  ]);
  const deps = build(
    load({
      ...cliEnv,
      POWERPLAN_STATE_DIR: join(simDir, `mcp-${tree.label}`),
      POWERPLAN_FLEET_FILE: simFleet,
    }),
  );
  const extra = { signal: new AbortController().signal, sendNotification: async () => {} };
  const r = await mcpFactory(deps).callTool(localCaller, 'get_fleet_status', {}, extra);
  await deps.stop();
  return {
    bytes: Buffer.byteLength(JSON.stringify(r)),
    hosts: (r.structuredContent as FleetStatus).hosts.length,
  };
};
const mcp = new Map<string, { bytes: number; hosts: number }>();
for (const tree of trees) mcp.set(tree.label, await mcpAnswer(tree));
console.log('');
printTable(
  `| version | MCP \`get_fleet_status\` result, ${simCount.toLocaleString('en')} hosts (text + structured content) | hosts in it | goal (< 100 KB) |`,
  trees.map((tree) => {
    const m = mcp.get(tree.label)!;
    return `| ${tree.label} | ${(m.bytes / 1024).toFixed(1)} KB | ${m.hosts} | ${verdict(m.bytes / 1024, 100, ' KB')} |`;
  }),
);
// The same status from a running service (a portal's or the page's call), started as an installed
// `powerplan serve`: the bin itself, with the V8 flags of its #! line (those of every start point).
/** Every page of GET /v1/fleet/status, joined (an earlier version answers all in one), and when the first came. */
const allPages = async (url: string): Promise<{ status: FleetStatus; firstMs: number }> => {
  const started = performance.now();
  const first = FleetStatus.parse(await (await fetch(`${url}/v1/fleet/status?limit=200`)).json());
  const firstMs = performance.now() - started;
  for (let next = first.nextCursor; next; ) {
    const page = FleetStatus.parse(
      await (await fetch(`${url}/v1/fleet/status?limit=200&cursor=${next}`)).json(),
    );
    first.hosts.push(...page.hosts);
    next = page.nextCursor;
  }
  return { status: first, firstMs };
};
const servedRuns = new Map<string, { warm: number[]; first: number[]; peakMiB: number; queries: number }>();
for (const tree of trees) {
  const served = await startServing(join(tree.root, 'bin', 'powerplan.js'), ['serve'], {
    cwd: tree.root,
    timeoutMs: 60_000,
    env: {
      ...cliEnv,
      POWERPLAN_STATE_DIR: join(simDir, `serve-${tree.label}`),
      POWERPLAN_FLEET_FILE: simFleet,
      POWERPLAN_PORT: '0',
      POWERPLAN_LOG_LEVEL: 'warn',
    },
  });
  const warm: number[] = [];
  const first: number[] = [];
  let queries = 0;
  for (let i = 0; i <= simRounds; i++) {
    const started = performance.now();
    const paged = tree.all.length ? await allPages(served.url) : undefined;
    const s =
      paged?.status ??
      (JSON.parse(await (await fetch(`${served.url}/v1/fleet/status`)).text()) as FleetStatus);
    // The first is the warm-up.
    if (i > 0) warm.push(performance.now() - started);
    if (i > 0) first.push(paged?.firstMs ?? performance.now() - started);
    queries = s.source.queries ?? 0;
    check(s);
  }
  const peakMiB =
    Number(
      /VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${served.child.pid}/status`, 'utf8'))?.[1] ?? Number.NaN,
    ) / 1024;
  await served.stop();
  servedRuns.set(tree.label, { warm, first, peakMiB, queries });
}
console.log(`\n${servedRuns.get('after')!.queries} instant queries per status.\n`);
printTable(
  '| hosts | version | how | wall ms to every host (median) | rounds ms | first page ms (median) | | peak RSS MiB | goal (< 2 s, < 150 MiB) |',
  trees.map((tree) => {
    const r = servedRuns.get(tree.label)!;
    return `| ${simCount} | ${tree.label} | \`GET /v1/fleet/status\`${tree.all.length ? ' (every page, limit 200)' : ''} of a running \`powerplan serve\` (the bin, its #! flags) | ${median(r.warm).toFixed(0)} | ${r.warm.map((x) => x.toFixed(0)).join(', ')} | ${median(r.first).toFixed(0)} | | ${r.peakMiB.toFixed(0)} (the service's peak) | ${verdict(median(r.warm), SIM_GOAL_MS, ' ms')}; ${verdict(r.peakMiB, SIM_GOAL_MIB, ' MiB')} |`;
  }),
);
await prometheus.stop();
await rm(simDir, { recursive: true, force: true });

console.log(`\nLoad average (1/5/15 min) after the Prometheus part: ${loadAverage()}\n`);

// ---- 2. The fan-out over live agents ------------------------------------------------------
if (values['no-fan-out']) {
  footer();
  process.exit(0);
}

const dir = await mkdtemp(join(tmpdir(), 'powerplan-bench-fleet-'));
const agents = await Promise.all(
  Array.from({ length: count }, async (_, i) => {
    const name = `agent${String(i + 1).padStart(2, '0')}`;
    const tokenFile = join(dir, `${name}-tokens.json`);
    const { token } = await createToken(tokenFile, 'fleet', ['read']);
    await secret(join(dir, `${name}.token`), token);
    const deps = buildDeps(
      loadConfig({
        POWERPLAN_STATE_DIR: join(dir, name),
        POWERPLAN_BACKEND: 'simulated',
        POWERPLAN_LOG_LEVEL: 'silent',
        POWERPLAN_TOKEN_FILE: tokenFile,
        POWERPLAN_HOST: '127.0.0.1',
        POWERPLAN_PORT: '0',
      }),
    );
    const server = await startHttpServer(deps);
    return { name, url: server.url, server, tags: [i % 2 ? 'web' : 'sql'] };
  }),
);
const fleetFile = join(dir, 'fleet.json');
await secret(
  fleetFile,
  JSON.stringify({
    hosts: agents.map((a) => ({ name: a.name, url: a.url, tokenFile: `${a.name}.token`, tags: a.tags })),
  }),
);

const config = loadConfig({
  POWERPLAN_STATE_DIR: join(dir, 'aggregator'),
  POWERPLAN_BACKEND: 'simulated',
  POWERPLAN_FLEET_FILE: fleetFile,
  POWERPLAN_FLEET_CONCURRENCY: values.concurrency,
});
const statusOnce = async (hosts?: string[]) => {
  const fleet = new FleetService(config, log);
  const started = performance.now();
  const s = await fleet.status(hosts ? { hosts } : {});
  const ms = performance.now() - started;
  fleet.close();
  if (s.summary.ok !== s.summary.total)
    throw new Error(`not every agent answered: ${JSON.stringify(s.summary)}`);
  return ms;
};

// Warm-up: JIT, every agent's first answer (recommendation, file reads).
await statusOnce();
const one: number[] = [];
const all: number[] = [];
for (let i = 0; i < rounds; i++) {
  one.push(await statusOnce([agents[0]!.name]));
  all.push(await statusOnce());
}
const wall = median(all);
const ref = median(one);
console.log(
  `${rounds} rounds, a fresh fleet service (no cache, new connections) per call; concurrency ${values.concurrency}\n`,
);
console.log(
  '| hosts | wall ms (median) | rounds ms | 1 host ms (reference) | per further host ms | goal (< 1.5 s) |',
);
console.log('|---|---|---|---|---|---|');
console.log(
  `| ${count} | ${wall.toFixed(0)} | ${all.map((x) => x.toFixed(0)).join(', ')} | ${ref.toFixed(1)} | ${((wall - ref) / (count - 1)).toFixed(1)} | ${verdict(wall, GOAL_MS, ' ms')} |`,
);
footer();

await Promise.all(agents.map((a) => a.server.close()));
await rm(dir, { recursive: true, force: true });
process.exit(0);
