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
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { footer, header, median, verdict } from './lib/machine.ts';
import { autocannon, repoRoot, rssMiB, startProcess } from './lib/processes.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    requests: { type: 'string', default: '10000' },
  },
});
const runs = Math.max(1, Math.trunc(Number(values.runs)));
const requests = Math.max(1, Math.trunc(Number(values.requests)));
const bin = join(repoRoot, 'bin', 'powerplan.js');

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
const wall = (args: string[], e: Record<string, string>): Promise<number> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...e },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.once('exit', (code) =>
      code === 0
        ? resolve(performance.now() - t0)
        : reject(new Error(`${args.join(' ')}: exit ${code} ${err}`)),
    );
  });

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
for (let i = 0; i < runs; i++) {
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

console.log(`Median of ${runs} runs each, interleaved. "x ref" = median / median of the reference.\n`);
console.log(
  '| what | reference (ms) | bundle ms (x ref) | sources via tsx ms (x ref) | goal | bundle: goal |',
);
console.log('|---|---|---|---|---|---|');
for (const t of timings) {
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

// Resident memory, idle and under repeated load: the server (the bundle) and, as the reference, the
// bare node http server under the same load.
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
  } finally {
    await server.stop();
  }
  return rss;
};
const service = await memoryOf([bin, 'serve'], env(false), '/v1/plans/active');
// V8 grows its young generation under a flood of requests; a smaller one keeps RSS down.
const smallYoung = await memoryOf(['--max-semi-space-size=1', bin, 'serve'], env(false), '/v1/plans/active');
const bare = await memoryOf([join(repoRoot, 'perf', 'lib', 'bare-server.mjs')], {}, '/healthz');
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
  '\n| resident MiB, 50 connections | powerplan serve (bundle), GET /v1/plans/active | the same with node --max-semi-space-size=1 | bare node http server, same load |',
);
console.log('|---|---|---|---|');
for (const [i, w] of when.entries())
  console.log(`| ${w} | ${service[i]!.toFixed(1)} | ${smallYoung[i]!.toFixed(1)} | ${bare[i]!.toFixed(1)} |`);
const peak = Math.max(...service);
const first = service[1]!;
const last = service[3]!;
console.log(
  `\nPeak ${peak.toFixed(1)} MiB (${(peak * 1.048576).toFixed(0)} MB): goal < 80 MB ${verdict(peak * 1.048576, 80, ' MB')}. ` +
    `Growth from ${n(1)} to ${n(3)} requests: ${(last - first).toFixed(1)} MiB (${(((last - first) / first) * 100).toFixed(1)}%): ` +
    `${last - first <= first * 0.05 ? 'no growth (within 5%)' : 'grows by more than 5%'}.`,
);
footer();
