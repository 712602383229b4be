/**
 * A hostile (or mistaken) Prometheus: its targets name listeners of the attacker's, to collect the
 * agents' control token from `fleet set`, and its answers are too large for the heap of a service
 * started with the unit's V8 flags. The token goes only to the URLs the fleet file's `agents.allow`
 * names (the others are reported "Not allowed", nothing sent to them), and an answer over the cap
 * is a 502 naming the cap while the service goes on answering.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FleetSetResult } from '../../src/domain/fleet.ts';
import { call } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { type ServerProcess, startServer } from '../support/processes.ts';
import { listen, writeSecret } from './rig.ts';

const TOKEN = `pp_${'A'.repeat(43)}`;
const MiB = 1024 * 1024;
/** The V8 flags of deploy/powerplan.service and `npm start`. */
const UNIT_FLAGS = '--max-old-space-size=128 --max-semi-space-size=1';

/** A listener that answers 500 to everything and remembers each request's headers. */
const recorder = async () => {
  const seen: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
  });
  const url = await listen(server);
  return { server, url, seen };
};

/** The vector and target lists Prometheus answers, each sample of a host named by `fleet_host`. */
const sample = (labels: Record<string, string>) => ({ metric: labels, value: [Date.now() / 1000, '1'] });

describe('hostile Prometheus', () => {
  let dir: string;
  const servers: Server[] = [];
  let allowed: Awaited<ReturnType<typeof recorder>>;
  let elsewhere: Awaited<ReturnType<typeof recorder>>;
  let promUrl: string;
  /** What the hostile Prometheus answers to a query: an object, or a size of padding in bytes. */
  let queryAnswer: (res: ServerResponse) => void;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-hostile-prom-'));
    allowed = await recorder();
    elsewhere = await recorder();
    servers.push(allowed.server, elsewhere.server);
    const targets = [
      // The agent the fleet file allows, and the attacker's listeners under agents' names: another
      // port on the same address, and the same port under another name.
      ['db1', `${allowed.url}/metrics`],
      ['db2', `${elsewhere.url}/metrics`],
      ['db3', `${allowed.url.replace('127.0.0.1', 'localhost')}/metrics`],
    ].map(([host, scrapeUrl]) => ({ labels: { job: 'powerplan', fleet_host: host! }, scrapeUrl }));
    queryAnswer = (res) => {
      const body = JSON.stringify({
        status: 'success',
        data: { resultType: 'vector', result: targets.map((t) => sample({ __name__: 'up', ...t.labels })) },
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    };
    const prom = createServer((req, res) => {
      req.resume();
      if (req.url?.startsWith('/api/v1/targets'))
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ status: 'success', data: { activeTargets: targets } }));
      else queryAnswer(res);
    });
    servers.push(prom);
    promUrl = await listen(prom);
    await writeSecret(join(dir, 'control.token'), `${TOKEN}\n`);
  });
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await rm(dir, { recursive: true, force: true });
  });

  const fleetFile = async (name: string, agents: Record<string, unknown>) => {
    const path = join(dir, `${name}.json`);
    await writeSecret(path, JSON.stringify({ prometheus: { url: promUrl, agents } }));
    return path;
  };

  it('attack, token collector: a target naming another listener gets nothing; it is reported "Not allowed"', async () => {
    const file = await fleetFile('allow', { tokenFile: 'control.token', allow: [allowed.url.slice(7)] });
    const t: TestDeps = await testDeps({ POWERPLAN_FLEET_FILE: file });
    try {
      for (const dryRun of [true, false]) {
        const r = FleetSetResult.parse(
          await call(t.deps, 'set_fleet_power_plan', { plan: 'balanced', dryRun }),
        );
        assert.deepEqual(
          r.hosts.map((h) => [h.name, h.status, h.error?.title]),
          [
            ['db1', 'error', 'HTTP 500'],
            ['db2', 'error', 'Not allowed'],
            ['db3', 'error', 'Not allowed'],
          ],
        );
        assert.match(
          r.hosts[1]!.error!.detail,
          /agents\.allow in the fleet file does not allow: nothing was sent/,
        );
      }
    } finally {
      await t.cleanup();
    }
    assert.equal(elsewhere.seen.length, 0, 'nothing at all reached the listener Prometheus named');
    // The allowed agent got the token: the check is not simply "send nothing".
    assert.equal(allowed.seen.length, 2);
    assert.ok(allowed.seen.every((h) => h.authorization === `Bearer ${TOKEN}`));
    // Every request that arrived came with the host's own name (no localhost alias got through).
    assert.ok(allowed.seen.every((h) => h.host === allowed.url.slice(7)));
  });

  it('a fleet file naming an agents token without agents.allow is refused, saying why', async () => {
    const file = await fleetFile('no-allow', { tokenFile: 'control.token' });
    const t = await testDeps({ POWERPLAN_FLEET_FILE: file });
    const before = allowed.seen.length + elsewhere.seen.length;
    try {
      await assert.rejects(
        call(t.deps, 'set_fleet_power_plan', { plan: 'balanced', dryRun: true }),
        (e: Error) => {
          assert.match(e.message, /prometheus\.agents\.allow: is required with tokenFile or tokenDir/);
          return true;
        },
      );
    } finally {
      await t.cleanup();
    }
    assert.equal(allowed.seen.length + elsewhere.seen.length, before, 'no agent asked');
  });

  describe('answers too large for the heap, under the unit flags', () => {
    let server: ServerProcess;
    let stateDir: string;
    before(async () => {
      stateDir = join(dir, 'state');
      server = await startServer({
        POWERPLAN_STATE_DIR: stateDir,
        POWERPLAN_BACKEND: 'simulated',
        POWERPLAN_FLEET_FILE: await fleetFile('status', {}),
        NODE_OPTIONS: UNIT_FLAGS,
      });
    });
    after(() => server.stop());

    /** An instant vector of `bytes` (about): many hosts with long label values. */
    const hugeVector = (bytes: number) => (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"success","data":{"resultType":"vector","result":[');
      const one = (i: number) =>
        JSON.stringify(
          sample({ __name__: 'up', job: 'powerplan', fleet_host: `h${i}`, pad: 'x'.repeat(400) }),
        );
      const per = one(0).length + 1;
      const count = Math.floor(bytes / per);
      let i = 0;
      const more = () => {
        while (i < count) {
          const chunk = Array.from({ length: Math.min(1000, count - i) }, (_, k) => one(i + k)).join(',');
          i += 1000;
          if (!res.write(`${chunk}${i < count ? ',' : ''}`)) return void res.once('drain', more);
        }
        res.end(']}}');
      };
      res.on('error', () => {});
      more();
    };

    it('attack, 45 MiB answer: a 502 naming the cap, and the service answers the next request', async () => {
      queryAnswer = hugeVector(45 * MiB);
      const res = await fetch(`${server.url}/v1/fleet/status`);
      assert.equal(res.status, 502);
      const problem = (await res.json()) as { detail: string };
      assert.match(problem.detail, /more than the 8\.0 MiB an answer may have/);
      assert.match(problem.detail, /POWERPLAN_FLEET_MAX_ANSWER_MIB/);
      const health = await fetch(`${server.url}/v1/plans/active`);
      assert.equal(health.status, 200);
      assert.equal(server.child.exitCode, null);
    });

    it('answers just under the cap to every query at once are read, the service alive', async () => {
      queryAnswer = hugeVector(7.5 * MiB);
      const res = await fetch(`${server.url}/v1/fleet/status`);
      await res.arrayBuffer();
      assert.notEqual(res.status, 502, 'under the cap, the answer is read');
      const health = await fetch(`${server.url}/v1/plans/active`);
      assert.equal(health.status, 200);
      assert.equal(server.child.exitCode, null);
    });
  });
});
