/**
 * A fleet on loopback: real agents (`startHttpServer` on port 0, simulated backend, each with its
 * own state directory and token file), plus the hosts a fleet must survive: a URL where nothing
 * listens, an agent given a wrong token, one given a read-only token, and a host that accepts the
 * connection but never answers. Writes the fleet file (mode 600) naming them all.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Deps } from '../../src/deps.ts';
import type { Scope } from '../../src/domain/scopes.ts';
import { createToken } from '../../src/lib/tokens.ts';
import { type RunningServer, startHttpServer } from '../../src/surfaces/http/server.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';

export interface Agent {
  name: string;
  tags: string[];
  t: TestDeps;
  server: RunningServer;
  deps: Deps;
}

export interface FleetRig {
  dir: string;
  fleetFile: string;
  agents: Agent[];
  /** The agent whose fleet entry carries a token it does not know. */
  wrongToken: Agent;
  /** The agent whose fleet entry carries a read-only token. */
  readOnly: Agent;
  deadUrl: string;
  slowUrl: string;
  /** Requests the silent host received (it never answers them). */
  slowHits: () => number;
  /** Connections to the silent host still open (a caller that gave up has closed its own). */
  slowOpen: () => number;
  cleanup: () => Promise<void>;
}

export const writeSecret = async (path: string, text: string): Promise<void> => {
  await writeFile(path, text, { mode: 0o600 });
  await chmod(path, 0o600);
};

const startAgent = async (dir: string, name: string, tags: string[], scope: Scope) => {
  const tokenFile = join(dir, `${name}-tokens.json`);
  const { token } = await createToken(tokenFile, 'fleet', [scope]);
  const t = await testDeps({
    POWERPLAN_TOKEN_FILE: tokenFile,
    POWERPLAN_PORT: '0',
    POWERPLAN_HOST: '127.0.0.1',
  });
  const server = await startHttpServer(t.deps);
  return { agent: { name, tags, t, server, deps: t.deps }, token };
};

/** Starts `server` on a free loopback port; resolves with its URL. */
export const listen = (server: Server, host = '127.0.0.1'): Promise<string> =>
  new Promise((resolve) =>
    server.listen(0, host, () => resolve(`http://${host}:${(server.address() as AddressInfo).port}`)),
  );

export const fleetRig = async (count = 5): Promise<FleetRig> => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-fleet-'));
  const tagsOf = (i: number) => (i % 2 === 0 ? ['sql'] : ['web']).concat(i === 0 ? ['prod'] : []);
  const started = await Promise.all(
    Array.from({ length: count }, (_, i) => startAgent(dir, `agent${i + 1}`, tagsOf(i), 'control')),
  );
  const wrong = await startAgent(dir, 'wrongtoken', ['sql'], 'control');
  const ro = await startAgent(dir, 'readonly', ['ro'], 'read');

  // Nothing listens there: a port just closed, on a loopback address of its own. Other test files
  // running beside this one listen on 127.0.0.1 with port 0 and may be given the same port number;
  // on 127.x.y.z they cannot catch this rig's requests.
  const deadHost = `127.${1 + randomInt(250)}.${1 + randomInt(250)}.${1 + randomInt(250)}`;
  const dead = createServer();
  const deadUrl = await listen(dead, deadHost);
  await new Promise<void>((r) => dead.close(() => r()));

  // Accepts, reads, never answers. Only requests under this rig's own path prefix count: a port
  // given to this server may just have been another rig's "nothing listens" port, whose requests
  // (a page polling its fleet) would arrive here too.
  const prefix = `/slow-${randomUUID()}`;
  let hits = 0;
  const ours = new Set<Socket>();
  const silent = createServer((req) => {
    if (!req.url?.startsWith(`${prefix}/`)) return req.socket.destroy();
    hits++;
    if (!ours.has(req.socket)) {
      ours.add(req.socket);
      req.socket.once('close', () => ours.delete(req.socket));
    }
  });
  const slowUrl = `${await listen(silent)}${prefix}`;

  const hosts: object[] = [];
  for (const [{ agent, token }, i] of started.map((s, i) => [s, i] as const)) {
    const tokenFile = join(dir, `${agent.name}.token`);
    await writeSecret(tokenFile, `${token}\n`);
    hosts.push({
      name: agent.name,
      url: agent.server.url,
      tokenFile: `${agent.name}.token`,
      tags: tagsOf(i),
    });
  }
  await writeSecret(join(dir, 'wrong.token'), `pp_${'B'.repeat(43)}`);
  hosts.push({ name: 'wrongtoken', url: wrong.agent.server.url, tokenFile: 'wrong.token', tags: ['sql'] });
  await writeSecret(join(dir, 'ro.token'), ro.token);
  hosts.push({ name: 'readonly', url: ro.agent.server.url, tokenFile: 'ro.token', tags: ['ro'] });
  hosts.push({ name: 'dead', url: deadUrl, tags: ['down'] });
  hosts.push({ name: 'slow', url: slowUrl, tags: ['down'] });
  const fleetFile = join(dir, 'fleet.json');
  await writeSecret(fleetFile, JSON.stringify({ hosts }, null, 2));

  const all = [...started.map((s) => s.agent), wrong.agent, ro.agent];
  return {
    dir,
    fleetFile,
    agents: started.map((s) => s.agent),
    wrongToken: wrong.agent,
    readOnly: ro.agent,
    deadUrl,
    slowUrl,
    slowHits: () => hits,
    slowOpen: () => ours.size,
    cleanup: async () => {
      silent.closeAllConnections();
      silent.close();
      await Promise.all(all.map((a) => a.server.close()));
      await Promise.all(all.map((a) => a.t.cleanup()));
      await rm(dir, { recursive: true, force: true });
    },
  };
};
