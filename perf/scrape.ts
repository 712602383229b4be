/**
 * CPU per Prometheus scrape on a Linux server with tuned and power-profiles-daemon installed and
 * running (as on RHEL / Fedora), against Debian's prometheus-node-exporter (default collectors)
 * in the same run: real tuned (plugin-free profiles) and the real power-profiles-daemon with their
 * own system bus in a private mount and PID namespace (test/platform/linux/real-daemons.ts), a
 * `powerplan serve` of each build given in there (the "before" checkout and this one), and the
 * exporter beside them. Every `--interval` seconds each is scraped at `/metrics`, one after the
 * other; CPU is the on-CPU time of every thread of the process (first field of
 * /proc/<pid>/task/<tid>/schedstat, ns) plus that of its waited-for children (cutime + cstime of
 * /proc/<pid>/stat, 10-ms ticks), over the whole window divided by the scrapes: what an idle server
 * pays per scrape, children included.
 *
 *   npm run perf:scrape -- [--before <checkout>] [--scrapes 8] [--interval 8] [--port 18801]
 *
 * Needs root (namespaces), dbus, tuned, power-profiles-daemon, prometheus-node-exporter.
 * Goal: powerplan's CPU per scrape <= the exporter's.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { v8Flags } from '../scripts/lib/start-points.mjs';
import { missing, type Namespace, startNamespace } from '../test/platform/linux/real-daemons.ts';
import { until } from '../test/support/until.ts';
import { perfArgs } from './lib/args.ts';
import { footer, header } from './lib/machine.ts';
import { repoRoot } from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    before: { type: 'string' },
    scrapes: { type: 'string', default: '8' },
    interval: { type: 'string', default: '8' },
    port: { type: 'string', default: '18801' },
    exporter: { type: 'string', default: '/usr/bin/prometheus-node-exporter' },
  },
});
const scrapes = Math.max(2, Math.trunc(Number(values.scrapes)));
const interval = Math.max(1, Number(values.interval));
const TICK_MS = 10; // USER_HZ = 100 on Linux

header('CPU per scrape: powerplan serve beside tuned and power-profiles-daemon, against node_exporter');
const why = missing();
if (why !== null) {
  console.log(`Cannot run: ${why}.`);
  process.exit(1);
}
if (!existsSync(values.exporter)) {
  console.log(`Cannot run: ${values.exporter} is not installed (apt-get install prometheus-node-exporter).`);
  process.exit(1);
}

const builds = [
  ...(values.before ? [{ name: `before (${values.before})`, repo: values.before }] : []),
  { name: 'after (this checkout)', repo: repoRoot },
];

/** A checkout's own V8 flags (deploy/v8-flags.json); this checkout's for one that has none. */
const flagsOf = (repo: string): string[] => {
  const file = join(repo, 'deploy', 'v8-flags.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { flags: string[] }).flags : v8Flags();
};

/** The shell line that prints a process's /proc/<pid>/stat, then every thread's schedstat. */
const cpuScript = (pid: number) => `cat /proc/${pid}/stat; cat /proc/${pid}/task/*/schedstat`;

/** ms of CPU: the threads' on-CPU ns (schedstat) plus the children's cutime + cstime (ticks). */
const cpuMs = (out: string): number => {
  const [stat = '', ...threads] = out.trim().split('\n');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): cutime is field 16 -> index 13.
  const children = (Number(fields[13]) + Number(fields[14])) * TICK_MS;
  return children + threads.reduce((sum, l) => sum + Number(l.split(' ')[0]) / 1e6, 0);
};
const localCpu = async (pid: number) =>
  cpuMs(await new Promise<string>((res) => execFile('sh', ['-c', cpuScript(pid)], (_e, out) => res(out))));

let ns: Namespace | undefined;
let exporter: ChildProcess | undefined;
try {
  // The desired-state checker at its default pace: only the scrapes and the service's own timers count.
  ns = await startNamespace('both', {
    repos: builds.map((b) => b.repo),
    env: { POWERPLAN_DESIRED_INTERVAL: '60' },
    // Each build started as it starts itself: with the V8 flags of its own deploy/v8-flags.json.
    nodeArgsPerRepo: builds.map((b) => flagsOf(b.repo)),
  });
  const exporterUrl = `http://127.0.0.1:${values.port}`;
  exporter = spawn(values.exporter, [`--web.listen-address=127.0.0.1:${values.port}`], { stdio: 'ignore' });
  await until('node_exporter', async () => (await fetch(`${exporterUrl}/metrics`)).ok, 20_000);

  const targets = [
    ...builds.map((b, i) => {
      const server = ns!.servers[i]!;
      return {
        name: `powerplan serve, ${b.name}`,
        url: `${server.url}/metrics`,
        cpu: async () => cpuMs((await ns!.run('sh', '-c', cpuScript(server.pid))).stdout),
      };
    }),
    {
      name: `prometheus-node-exporter (${values.exporter})`,
      url: `${exporterUrl}/metrics`,
      cpu: () => localCpu(exporter!.pid!),
    },
  ];
  const scrapeAll = async () => {
    const series: number[] = [];
    for (const t of targets) {
      const text = await (await fetch(t.url)).text();
      series.push(text.split('\n').filter((l) => l && !l.startsWith('#')).length);
    }
    return series;
  };
  const owner = await ns.api<{ owner: string; plan: { id: string } | null }>('GET', '/v1/plans/active');
  for (const b of builds) console.log(`${b.name}: node ${flagsOf(b.repo).join(' ')}`);
  console.log(
    `Owner seen by the service: ${owner.owner} (${owner.plan?.id ?? 'no plan'}); ${scrapes} scrapes ${interval} s apart.\n`,
  );
  // Warm-up: the first scrape of each pays for lazy start-up work.
  await scrapeAll();
  await new Promise((r) => setTimeout(r, interval * 1000));
  const before = await Promise.all(targets.map((t) => t.cpu()));
  let series: number[] = [];
  for (let i = 0; i < scrapes; i++) {
    series = await scrapeAll();
    if (i < scrapes - 1) await new Promise((r) => setTimeout(r, interval * 1000));
  }
  // The last scrape's work is done when its answer has arrived; a moment for the children to be reaped.
  await new Promise((r) => setTimeout(r, 200));
  const after = await Promise.all(targets.map((t) => t.cpu()));
  const perScrape = targets.map((_, i) => (after[i]! - before[i]!) / scrapes);
  const reference = perScrape.at(-1)!;
  console.log('| process | series | CPU per scrape (ms, children included) | vs node_exporter |');
  console.log('|---|---|---|---|');
  targets.forEach((t, i) => {
    console.log(
      `| ${t.name} | ${series[i]} | ${perScrape[i]!.toFixed(1)} | ${(perScrape[i]! / Math.max(reference, 0.01)).toFixed(2)} |`,
    );
  });
  const mine = perScrape[builds.length - 1]!;
  console.log(
    `\nGoal: powerplan (this checkout) <= node_exporter: ${mine.toFixed(1)} ms vs ${reference.toFixed(1)} ms: ${mine <= reference ? 'met' : 'MISSED'}` +
      ' (children in 10-ms ticks).',
  );
} finally {
  exporter?.kill('SIGTERM');
  await ns?.stop();
  footer();
}
