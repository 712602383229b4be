/**
 * Resident memory of the service from every start point that runs here (scripts/lib/start-points.mjs:
 * the bin through its #! line, `npm start`'s command, the systemd unit's ExecStart, the container's
 * ENTRYPOINT + CMD, the Windows service's NODE_OPTIONS on this node), each with the flags its file
 * gives, against the same server started with no flags, in the same run: idle after `--settle` s,
 * then after 10,000, 20,000 and 30,000 requests of GET /v1/plans/active (simulated backend, 50
 * connections). The single executable needs Windows; its flags are checked by
 * test/structure/v8-flags.test.ts. The bundle is built first (what `npm install` builds).
 *
 *   npm run perf:memory -- [--requests 10000] [--settle 5]
 *
 * Goals: under 80 MiB idle and under 100 MiB after 30,000 requests, from every start point.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { minimalEnv, startServing } from '../scripts/lib/serve.mjs';
import { startPoints } from '../scripts/lib/start-points.mjs';
import { perfArgs } from './lib/args.ts';
import { footer, header } from './lib/machine.ts';
import { autocannon, repoRoot, rssMiB } from './lib/processes.ts';

const { values } = perfArgs(import.meta.filename, {
  options: { requests: { type: 'string', default: '10000' }, settle: { type: 'string', default: '5' } },
});
const requests = Math.max(1, Math.trunc(Number(values.requests)));
const settle = Math.max(0, Number(values.settle));

header('Resident memory from every start point of the service');
// Figures for the current sources: the bin runs the bundle only while it is newer than them.
await new Promise<void>((resolve, reject) => {
  const child = spawn(process.execPath, [join(repoRoot, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`build exited with ${code}`))));
});
const bin = join(repoRoot, 'bin', 'powerplan.js');
const cases = [
  ...startPoints()
    .filter((p) => p.run !== null)
    .map((p) => ({ name: p.name, flags: p.flags.join(' '), run: p.run! })),
  {
    name: 'reference: `node bin/powerplan.js serve`, no flags',
    flags: '-',
    run: { command: process.execPath, args: [bin, 'serve'] },
  },
];

const rows: { name: string; flags: string; rss: number[] }[] = [];
for (const c of cases) {
  const stateDir = await mkdtemp(join(tmpdir(), 'powerplan-memory-'));
  const server = await startServing(c.run.command, c.run.args, {
    cwd: repoRoot,
    env: {
      ...minimalEnv(),
      ...c.run.env,
      POWERPLAN_STATE_DIR: stateDir,
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_LOG_LEVEL: 'warn',
      POWERPLAN_PORT: '0',
    },
    timeoutMs: 60_000,
  });
  try {
    const pid = server.child.pid!;
    await new Promise((r) => setTimeout(r, settle * 1000));
    const rss = [await rssMiB(pid)];
    for (let i = 0; i < 3; i++) {
      await autocannon(`${server.url}/v1/plans/active`, { connections: 50, amount: requests });
      rss.push(await rssMiB(pid));
    }
    rows.push({ name: c.name, flags: c.flags, rss });
  } finally {
    await server.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

const n = (k: number) => (k * requests).toLocaleString('en-US');
console.log(
  `| start point | V8 flags | idle | after ${n(1)} | after ${n(2)} | after ${n(3)} | goals (< 80 idle, < 100 loaded) |`,
);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const met = r.rss[0]! < 80 && Math.max(...r.rss.slice(1)) < 100;
  const goal = r.flags === '-' ? 'reference' : met ? 'met' : 'MISSED';
  console.log(`| ${r.name} | ${r.flags} | ${r.rss.map((x) => x.toFixed(1)).join(' | ')} | ${goal} |`);
}
console.log('\nRSS in MiB (VmRSS of the node process).');
footer();
