/**
 * Idle cost: how often an idle `powerplan serve` wakes up and how much CPU it takes, against a bare
 * `node:http` server measured over the same window. Wake-ups are voluntary context switches (every
 * thread of the process: /proc/<pid>/task/<tid>/status), CPU time is user + system
 * (/proc/<pid>/stat). Every process runs side by side and is read at the same moments, after a
 * settling time (V8 finishes its start-up work, such as memory-reducing GCs, in the first ~20 s).
 *
 *   npm run perf:idle -- [--seconds 30] [--settle 40] [--scrape 15]
 *
 * Cases: the bundle idle; the bundle with a desired plan and enforcement on (checks every
 * POWERPLAN_DESIRED_INTERVAL, 60 s by default); the bundle scraped by a Prometheus-like client every
 * `--scrape` seconds (the event-loop delay monitor runs while scraped); the sources through tsx
 * (the same code, a larger heap).
 * Goals (Linux): <= 1 wake-up per second and < 5 ms CPU per 30 s, idle and with enforcement on.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { perfArgs } from './lib/args.ts';
import { footer, header, verdict } from './lib/machine.ts';
import { repoRoot, rssMiB, type ServerProcess, startProcess } from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, {
  options: {
    seconds: { type: 'string', default: '30' },
    settle: { type: 'string', default: '40' },
    scrape: { type: 'string', default: '15' },
  },
});
const seconds = Math.max(1, Number(values.seconds));
const settle = Math.max(0, Number(values.settle));
const scrapeEvery = Math.max(1, Number(values.scrape));

header('Idle cost: wake-ups and CPU time of an idle server');
console.log(`Settle ${settle} s after start, then measure ${seconds} s; all processes side by side.\n`);

/**
 * Voluntary context switches per thread, and CPU time in ns over every thread (the first field of
 * /proc/<pid>/task/<tid>/schedstat; /proc/<pid>/stat counts in 10-ms ticks, too coarse for the goal).
 */
const sample = async (pid: number): Promise<{ sw: Map<string, number>; cpuNs: number }> => {
  const sw = new Map<string, number>();
  let cpuNs = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const status = await readFile(`/proc/${pid}/task/${tid}/status`, 'utf8').catch(() => '');
    const n = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status);
    if (n) sw.set(tid, Number(n[1]));
    const sched = await readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').catch(() => '0');
    cpuNs += Number(sched.split(' ')[0]);
  }
  return { sw, cpuNs };
};

interface Case {
  name: string;
  args: string[];
  env: Record<string, string>;
  /** GET /metrics every --scrape seconds. */
  scraped?: boolean;
  goal: boolean;
}

const bin = join(repoRoot, 'bin', 'powerplan.js');
const stateDirs: string[] = [];
const serve = async (extra: Record<string, string>, fromSource = false) => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-bench-idle-'));
  stateDirs.push(dir);
  return {
    POWERPLAN_STATE_DIR: dir,
    POWERPLAN_BACKEND: 'simulated',
    POWERPLAN_LOG_LEVEL: 'warn',
    POWERPLAN_PORT: '0',
    ...(fromSource ? { POWERPLAN_FROM_SOURCE: '1' } : {}),
    ...extra,
  };
};
const cases: Case[] = [
  {
    name: 'bare node:http server (reference)',
    args: [join(repoRoot, 'perf', 'lib', 'bare-server.mjs')],
    env: {},
    goal: false,
  },
  { name: 'powerplan serve (bundle), idle', args: [bin, 'serve'], env: await serve({}), goal: true },
  {
    name: 'powerplan serve (bundle), desired plan enforced',
    args: [bin, 'serve'],
    env: await serve({ POWERPLAN_DESIRED_PLAN: 'balanced', POWERPLAN_ENFORCE: 'true' }),
    goal: true,
  },
  {
    name: `powerplan serve (bundle), scraped every ${scrapeEvery} s`,
    args: [bin, 'serve'],
    env: await serve({}),
    scraped: true,
    goal: false,
  },
  {
    name: 'powerplan serve (sources via tsx), idle',
    args: [bin, 'serve'],
    env: await serve({}, true),
    goal: false,
  },
];

const servers: ServerProcess[] = [];
const scrapers: NodeJS.Timeout[] = [];
try {
  for (const c of cases) servers.push(await startProcess(c.args, c.env));
  cases.forEach((c, i) => {
    if (!c.scraped) return;
    const url = `${servers[i]!.url}/metrics`;
    const scrape = () =>
      void fetch(url)
        .then((r) => r.arrayBuffer())
        .catch(() => {});
    scrape();
    scrapers.push(setInterval(scrape, scrapeEvery * 1000));
  });
  await new Promise((r) => setTimeout(r, settle * 1000));
  const pids = servers.map((s) => s.child.pid!);
  const before = await Promise.all(pids.map(sample));
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const after = await Promise.all(pids.map(async (p) => ({ ...(await sample(p)), rss: await rssMiB(p) })));
  const elapsed = (performance.now() - t0) / 1000;

  console.log(
    '| case | wake-ups/s (all threads) | main thread / others | CPU ms per 30 s | RSS MiB | goal <= 1 wake-up/s | goal < 5 ms CPU / 30 s |',
  );
  console.log('|---|---|---|---|---|---|---|');
  cases.forEach((c, i) => {
    const pid = String(pids[i]);
    let main = 0;
    let others = 0;
    for (const [tid, n] of after[i]!.sw) {
      const d = n - (before[i]!.sw.get(tid) ?? 0);
      if (tid === pid) main += d;
      else others += d;
    }
    const perSecond = (main + others) / elapsed;
    const cpu30 = ((after[i]!.cpuNs - before[i]!.cpuNs) / 1e6) * (30 / elapsed);
    console.log(
      `| ${c.name} | ${perSecond.toFixed(2)} | ${(main / elapsed).toFixed(2)} / ${(others / elapsed).toFixed(2)} | ${cpu30.toFixed(1)} | ${after[i]!.rss.toFixed(1)} | ${c.goal ? verdict(perSecond, 1) : '-'} | ${c.goal ? (cpu30 < 5 ? 'met' : `missed by ${(cpu30 - 5).toFixed(0)} ms`) : '-'} |`,
    );
  });
  console.log(
    `\nOver ${elapsed.toFixed(1)} s. CPU time from schedstat (ns, every thread); the scraped case includes answering its scrapes.`,
  );
} finally {
  for (const t of scrapers) clearInterval(t);
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(stateDirs.map((d) => rm(d, { recursive: true, force: true })));
}
footer();
