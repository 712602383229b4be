/**
 * A fleet watched by a real Prometheus on loopback: live agents (simulated backend, one token file
 * shared by all, so one read token scrapes them and one control token changes them), their
 * file_sd document written by `powerplan fleet prometheus-targets`, a Prometheus scraping them
 * every two seconds behind basic auth (its own web config), and an HTTPS proxy in front of it that wants
 * a bearer token (as an operator's auth proxy would), so both credential kinds and a CA file are
 * used for real. Fleet files for each way in.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToken } from '../../src/lib/tokens.ts';
import { type RunningServer, startHttpServer } from '../../src/surfaces/http/server.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { runCli } from '../support/processes.ts';
import { type RunningPrometheus, startPrometheus } from '../support/prometheus.ts';
import { makeTestCertificate } from '../support/tls.ts';
import { until } from '../support/until.ts';
import { writeSecret } from './rig.ts';

export interface WatchedAgent {
  name: string;
  tags: string[];
  t: TestDeps;
  server: RunningServer;
}

export interface PrometheusRig {
  dir: string;
  agents: WatchedAgent[];
  prometheus: RunningPrometheus;
  /** The fleet file naming the agents themselves. */
  agentsFleet: string;
  /** The fleet file naming Prometheus (basic auth, the control token for the agents). */
  promFleet: string;
  /** The same through the HTTPS bearer-token proxy, with its CA file. */
  proxyFleet: string;
  proxyUrl: string;
  /** Rewrites the file_sd document with only these agents. */
  writeTargets: (names: string[]) => Promise<void>;
  /** Resolves once Prometheus' newest scrape of every named agent is newer than now. */
  scrapedAfterNow: (names?: string[]) => Promise<void>;
  /** How many instant queries went through the proxy so far. */
  proxiedQueries: () => number;
  cleanup: () => Promise<void>;
}

const PASSWORD = 'correct horse battery staple';

/** A bcrypt hash for Prometheus' web config (cost 4: verified at every request). */
const bcrypt = (password: string): string =>
  execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      'import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))',
      password,
    ],
    { encoding: 'utf8', stderr: 'ignore' } as never,
  ).trim();

export const prometheusRig = async (count = 3): Promise<PrometheusRig> => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-prom-'));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  const cleanup = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  };
  try {
    const tokens = join(dir, 'agent-tokens.json');
    const read = await createToken(tokens, 'prometheus', ['read']);
    const control = await createToken(tokens, 'fleet', ['control']);
    await writeSecret(join(dir, 'read.token'), read.token);
    await writeSecret(join(dir, 'control.token'), control.token);
    // The same token under each host's name, for a fleet file with agents.tokenDir.
    for (let i = 0; i < count; i++) await writeSecret(join(dir, `agent${i + 1}.token`), control.token);
    await writeSecret(join(dir, 'prometheus.password'), `${PASSWORD}\n`);

    const tagsOf = (i: number) => (i % 2 === 0 ? ['sql'] : ['web']);
    const agents: WatchedAgent[] = [];
    for (let i = 0; i < count; i++) {
      const t = await testDeps({
        POWERPLAN_TOKEN_FILE: tokens,
        POWERPLAN_PORT: '0',
        POWERPLAN_HOST: '127.0.0.1',
      });
      const server = await startHttpServer(t.deps);
      agents.push({ name: `agent${i + 1}`, tags: tagsOf(i), t, server });
      cleanups.push(async () => {
        await server.close();
        await t.cleanup();
      });
    }
    const agentsFleet = join(dir, 'fleet.json');
    await writeSecret(
      agentsFleet,
      JSON.stringify({
        hosts: agents.map((a) => ({
          name: a.name,
          url: a.server.url,
          tokenFile: 'control.token',
          tags: a.tags,
        })),
      }),
    );

    // The file_sd document exactly as the product writes it.
    const targetsFile = join(dir, 'targets.json');
    let document = '';
    const writeTargets = async (names: string[]) => {
      if (document) {
        // Fewer hosts: the product's document, filtered (no second CLI start).
        const groups = (JSON.parse(document) as { labels: Record<string, string> }[]).filter((g) =>
          names.includes(g.labels.fleet_host ?? ''),
        );
        await writeFile(`${targetsFile}.new`, JSON.stringify(groups));
        await rename(`${targetsFile}.new`, targetsFile);
        return;
      }
      const args = ['fleet', 'prometheus-targets', '--fleet', agentsFleet, '--hosts', names.join(',')];
      const out = await runCli(args, {
        POWERPLAN_BACKEND: 'simulated',
        POWERPLAN_STATE_DIR: join(dir, 'cli'),
      });
      if (out.code !== 0) throw new Error(`fleet prometheus-targets failed: ${out.stderr}`);
      document = out.stdout;
      await writeFile(`${targetsFile}.new`, out.stdout);
      await rename(`${targetsFile}.new`, targetsFile);
    };
    await writeTargets(agents.map((a) => a.name));

    await writeFile(join(dir, 'web.yml'), `basic_auth_users:\n  powerplan: '${bcrypt(PASSWORD)}'\n`);
    const prometheus = await startPrometheus(
      dir,
      [
        'global: { scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s }',
        'scrape_configs:',
        '  - job_name: powerplan',
        '    file_sd_configs:',
        `      - files: [${JSON.stringify(targetsFile)}]`,
        '        refresh_interval: 1s',
        '    authorization:',
        '      type: Bearer',
        `      credentials_file: ${JSON.stringify(join(dir, 'read.token'))}`,
        '',
      ].join('\n'),
      { args: [`--web.config.file=${join(dir, 'web.yml')}`] },
    );
    cleanups.push(prometheus.stop);

    // The auth proxy: HTTPS, wants the bearer token, forwards with Prometheus' basic auth.
    const proxyToken = `pp_${'P'.repeat(43)}`;
    let queries = 0;
    await writeSecret(join(dir, 'proxy.token'), proxyToken);
    const tls = makeTestCertificate(dir);
    const upstream = new URL(prometheus.url);
    const basic = `Basic ${Buffer.from(`powerplan:${PASSWORD}`).toString('base64')}`;
    const proxy = https.createServer(
      { cert: await readFile(tls.cert), key: await readFile(tls.key) },
      (req, res) => {
        if (req.url?.startsWith('/api/v1/query')) queries++;
        if (req.headers.authorization !== `Bearer ${proxyToken}`) {
          res.writeHead(401, { 'content-type': 'text/plain' }).end('bearer token required\n');
          return;
        }
        const forward = http.request(
          {
            host: upstream.hostname,
            port: upstream.port,
            path: req.url,
            method: req.method,
            headers: { ...req.headers, authorization: basic },
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', () => res.writeHead(502).end());
        req.pipe(forward);
      },
    );
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          proxy.closeAllConnections();
          proxy.close(() => r());
        }),
    );
    const proxyUrl = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

    const promFleet = join(dir, 'prom-fleet.json');
    await writeSecret(
      promFleet,
      JSON.stringify({
        prometheus: {
          url: prometheus.url,
          basicAuth: { username: 'powerplan', passwordFile: 'prometheus.password' },
          agents: { tokenFile: 'control.token', allow: ['127.0.0.1'] },
        },
      }),
    );
    const proxyFleet = join(dir, 'proxy-fleet.json');
    await writeSecret(
      proxyFleet,
      JSON.stringify({
        prometheus: {
          url: proxyUrl,
          tokenFile: 'proxy.token',
          caFile: tls.cert,
          selector: '{job="powerplan", fleet_tags=~".*"}',
          agents: { tokenDir: '.', allow: ['http://127.0.0.1'] },
        },
      }),
    );

    const query = async (q: string) => {
      const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(q)}`, {
        headers: { authorization: basic },
      });
      const body = (await res.json()) as {
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      return body.data.result;
    };
    const scrapedAfterNow = async (names = agents.map((a) => a.name)) => {
      const now = Date.now() / 1000;
      await until(
        `Prometheus scraping ${names.join(', ')}`,
        async () => {
          const r = await query('timestamp(powerplan_backend_up{job="powerplan"})');
          return names.every((n) => r.some((s) => s.metric.fleet_host === n && Number(s.value[1]) > now));
        },
        20_000,
        200,
      );
    };
    await scrapedAfterNow();
    return {
      dir,
      agents,
      prometheus,
      agentsFleet,
      promFleet,
      proxyFleet,
      proxyUrl,
      writeTargets,
      scrapedAfterNow,
      proxiedQueries: () => queries,
      cleanup,
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
};
