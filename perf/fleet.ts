/**
 * Fleet status of many agents: 50 agents in this process (real HTTP servers on loopback, port 0,
 * simulated backend, each with its own state directory and token file), a fleet file naming them,
 * and `get_fleet_status` through a fresh fleet service per round (no cached answer, new
 * connections: the cold case). The reference, measured in the same run, is the status of one
 * agent; per-host overhead is what each further host adds.
 *
 *   npm run perf:fleet -- [--hosts 50] [--rounds 5] [--concurrency 16]
 *
 * Goal: the status of 50 agents in under 1.5 s.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { buildDeps } from '../src/deps.ts';
import { createLogger } from '../src/lib/log.ts';
import { createToken } from '../src/lib/tokens.ts';
import { FleetService } from '../src/services/fleet/fleet.ts';
import { startHttpServer } from '../src/surfaces/http/server.ts';
import { footer, header, median, verdict } from './lib/machine.ts';

const { values } = parseArgs({
  options: {
    hosts: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
  },
});
const count = Number(values.hosts);
const rounds = Number(values.rounds);
const GOAL_MS = 1500;

header(`Fleet status of ${count} agents (in-process HTTP servers on loopback, simulated backend)`);

const dir = await mkdtemp(join(tmpdir(), 'powerplan-bench-fleet-'));
const secret = async (path: string, text: string) => {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
};
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
const log = createLogger('silent');
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
