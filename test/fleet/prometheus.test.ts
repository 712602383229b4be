/**
 * The fleet from a real Prometheus (Debian's package) scraping live agents every two seconds: the
 * status from a fixed handful of instant queries, the same plans and kinds as asking the agents,
 * filters, a change seen after the next scrape, a change sent to the agents found in Prometheus'
 * targets, and a stopped agent reported unreachable with the time of its last sample.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FleetHostList, FleetSetResult, FleetStatus } from '../../src/domain/fleet.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { call } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { isCode } from '../support/errors.ts';
import { withMcpClient } from '../support/mcp.ts';
import { runCli } from '../support/processes.ts';
import { hasPrometheus } from '../support/prometheus.ts';
import { until } from '../support/until.ts';
import { type PrometheusRig, prometheusRig } from './prometheus-rig.ts';
import { writeSecret } from './rig.ts';

const skip = hasPrometheus
  ? false
  : process.env.CI
    ? false // in CI the package is installed by .ci/run: a missing binary fails the test
    : 'prometheus and promtool are not installed (apt-get install prometheus)';

describe('fleet status from a real Prometheus', { skip }, () => {
  let rig: PrometheusRig;
  let fromProm: TestDeps;
  let fromAgents: TestDeps;
  let viaProxy: TestDeps;
  const status = (t: TestDeps, input: object = {}) =>
    call<FleetStatus>(t.deps, 'get_fleet_status', input).then((s) => FleetStatus.parse(s));
  const kindOn = async (i: number) => (await rig.agents[i]!.t.deps.backend.getActive()).plan?.kind;

  before(async () => {
    rig = await prometheusRig(3);
    fromProm = await testDeps({ POWERPLAN_FLEET_FILE: rig.promFleet });
    fromAgents = await testDeps({ POWERPLAN_FLEET_FILE: rig.agentsFleet });
    viaProxy = await testDeps({ POWERPLAN_FLEET_FILE: rig.proxyFleet });
  });
  after(async () => {
    await fromProm?.cleanup();
    await fromAgents?.cleanup();
    await viaProxy?.cleanup();
    await rig?.cleanup();
  });

  it('answers from a few instant queries: the same hosts, plans, kinds and advice as asking the agents', async () => {
    await call(rig.agents[1]!.t.deps, 'set_power_plan', { plan: 'high-performance' });
    await call(rig.agents[0]!.t.deps, 'run_cpu_benchmark', {
      force: true,
      threads: 1,
      idleGapsMs: [50, 200],
    });
    await rig.scrapedAfterNow();
    // A scrape that timed out on a busy machine shows as up == 0 until the next one: wait for all three.
    await until('every agent scraped fine', async () => (await status(viaProxy)).summary.ok === 3);
    const before = rig.proxiedQueries();
    const p = await status(viaProxy);
    assert.equal(rig.proxiedQueries() - before, 17, 'seventeen instant queries for the whole fleet');
    assert.equal(p.source.kind, 'prometheus');
    assert.equal(p.source.queries, 17);
    const a = await status(fromAgents);
    assert.equal(a.source.kind, 'agents');
    // The workload cost is observed live, over each reader's own window: ranked alike, not equal.
    const { costliest: pc, ...ps } = p.summary;
    const { costliest: ac, ...as } = a.summary;
    assert.deepEqual(ps, as);
    for (const ranked of [pc ?? [], ac ?? []])
      assert.deepEqual(
        ranked,
        [...ranked].sort(
          (x, y) => y.workloadAddedPercent - x.workloadAddedPercent || x.name.localeCompare(y.name),
        ),
      );
    assert.equal(p.summary.ok, 3);
    const facts = (s: FleetStatus) =>
      s.hosts.map((h) => ({
        name: h.name,
        tags: h.tags,
        status: h.status,
        plan: h.plan,
        owner: h.owner,
        canSet: h.canSet,
        policyManaged: h.policyManaged,
        holds: h.holds,
        drift: h.drift,
        change: h.recommendation?.changeRecommended,
        advised: h.recommendation?.kind,
        edited: h.edited,
        mismatches: h.mismatches,
        controlledBy: h.controlledBy,
      }));
    assert.deepEqual(facts(p), facts(a));
    assert.deepEqual(
      [...p.hosts].sort((x, y) => x.name.localeCompare(y.name)).map((h) => h.plan?.kind),
      ['balanced', 'high-performance', 'balanced'],
    );
    // The burst penalty after the longest gap, as the agent's benchmark history has it. By name:
    // the hosts are ordered by penalty, and a loaded machine may measure one below zero.
    const host = (s: FleetStatus, name: string) => s.hosts.find((h) => h.name === name)!;
    const burst = host(a, 'agent1').burstPenaltyPercent;
    assert.notEqual(burst, null);
    // Prometheus' answer is rounded to one decimal: at most half a tenth apart (plus float error).
    assert.ok(
      Math.abs(host(p, 'agent1').burstPenaltyPercent! - burst!) <= 0.05 + 1e-9,
      `${host(p, 'agent1').burstPenaltyPercent} vs ${burst}`,
    );
    assert.equal(host(p, 'agent2').burstPenaltyPercent, null, 'no benchmark on agent2');
    for (const h of p.hosts) {
      assert.ok(Date.now() - Date.parse(h.checkedAt) < 15_000, `${h.name} scraped at ${h.checkedAt}`);
      assert.equal(h.lastSampleAt, undefined, 'only for a host that is not ok');
      assert.ok(h.durationMs >= 0 && h.durationMs < 1000);
    }
    // Basic auth straight to Prometheus and the bearer token through the HTTPS proxy answer alike.
    assert.deepEqual(facts(await status(fromProm)), facts(p));
  });

  it('filters by hosts and by tags from the target labels; an unknown host changes nothing', async () => {
    assert.deepEqual((await status(fromProm, { tags: ['sql'] })).hosts.map((h) => h.name).sort(), [
      'agent1',
      'agent3',
    ]);
    assert.deepEqual(
      (await status(fromProm, { hosts: ['agent2', 'agent3'], tags: ['web'] })).hosts.map((h) => h.name),
      ['agent2'],
    );
    await assert.rejects(
      status(fromProm, { hosts: ['nosuch'] }),
      isCode('invalid_input', /no host named 'nosuch'/),
    );
    await assert.rejects(
      status(fromProm, { tags: ['nosuch'] }),
      isCode('invalid_input', /no host has the tag/),
    );
  });

  it('sees a plan changed on one agent after the next scrape', async () => {
    await call(rig.agents[2]!.t.deps, 'set_power_plan', { plan: 'power-saver' });
    const s = await until('the change in Prometheus', async () => {
      const x = await status(fromProm, { hosts: ['agent3'] });
      return x.hosts[0]?.plan?.kind === 'power-saver' && x;
    });
    assert.equal(s.hosts[0]!.plan?.name, 'Power saver');
  });

  it("set_fleet_power_plan finds the agents in Prometheus' targets: a dry run changes nothing, then each is changed", async () => {
    const hosts = FleetHostList.parse(await call(fromProm.deps, 'list_fleet_hosts'));
    assert.deepEqual(
      hosts.hosts.map((h) => [h.name, h.url, h.auth]),
      rig.agents.map((a) => [a.name, a.server.url, 'token']),
    );
    const dry = FleetSetResult.parse(
      await call(viaProxy.deps, 'set_fleet_power_plan', {
        plan: 'high-performance',
        tags: ['sql'],
        dryRun: true,
      }),
    );
    assert.deepEqual(dry.hosts.map((h) => [h.name, h.changed]).sort(), [
      ['agent1', true],
      ['agent3', true],
    ]);
    assert.equal(await kindOn(0), 'balanced', 'the dry run changed nothing');
    const done = FleetSetResult.parse(
      await call(fromProm.deps, 'set_fleet_power_plan', { plan: 'high-performance', hosts: ['agent1'] }),
    );
    assert.deepEqual(done.summary, { total: 1, changed: 1, unchanged: 0, failed: 0 });
    assert.equal(done.hosts[0]!.after?.kind, 'high-performance');
    assert.equal(await kindOn(0), 'high-performance');
    await until('the change in Prometheus', async () => {
      const x = await status(fromProm, { hosts: ['agent1'] });
      return x.hosts[0]?.plan?.kind === 'high-performance';
    });
  });

  it('the MCP tool answers the same from Prometheus', async () => {
    const r = await withMcpClient(fromProm.deps, (client) =>
      client.callTool({ name: 'get_fleet_status', arguments: { tags: ['sql'] } }),
    );
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    const s = FleetStatus.parse(r.structuredContent);
    assert.equal(s.source.kind, 'prometheus');
    assert.deepEqual(s.hosts.map((h) => [h.name, h.status]).sort(), [
      ['agent1', 'ok'],
      ['agent3', 'ok'],
    ]);
  });

  it('REST and the CLI answer the same shape from Prometheus', async () => {
    const app = createApp(fromProm.deps);
    const res = await app.request('/v1/fleet/status?tags=web');
    assert.equal(res.status, 200);
    const rest = FleetStatus.parse(await res.json());
    assert.deepEqual(
      rest.hosts.map((h) => [h.name, h.plan?.kind]),
      [['agent2', 'high-performance']],
    );
    const cli = await runCli(['fleet', 'status', '--fleet', rig.promFleet], {
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_STATE_DIR: join(rig.dir, 'cli'),
    });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /agent2\s+ok\s+"High performance"\s+high-performance/);
    assert.match(cli.stdout, /3 hosts: 3 ok, 0 unreachable/);
    assert.match(cli.stdout, /from Prometheus http:\/\/127\.0\.0\.1:\d+, evaluated at /);
  });

  it('refuses wrong credentials and a Prometheus that is not there with a clear error, and hands no targets', async () => {
    const wrong = join(rig.dir, 'wrong-fleet.json');
    await writeSecret(join(rig.dir, 'wrong.password'), 'not it\n');
    await writeSecret(
      wrong,
      JSON.stringify({
        prometheus: {
          url: rig.prometheus.url,
          basicAuth: { username: 'powerplan', passwordFile: 'wrong.password' },
        },
      }),
    );
    const t = await testDeps({ POWERPLAN_FLEET_FILE: wrong });
    try {
      await assert.rejects(status(t), isCode('upstream', /refused the credentials \(HTTP 401\)/));
    } finally {
      await t.cleanup();
    }
    const nowhere = join(rig.dir, 'nowhere-fleet.json');
    await writeSecret(nowhere, JSON.stringify({ prometheus: { url: 'http://127.0.0.1:1' } }));
    const n = await testDeps({ POWERPLAN_FLEET_FILE: nowhere });
    try {
      await assert.rejects(
        status(n),
        isCode('upstream', /Prometheus at http:\/\/127\.0\.0\.1:1: Unreachable: ECONNREFUSED/),
      );
    } finally {
      await n.cleanup();
    }
    await assert.rejects(
      call(fromProm.deps, 'get_fleet_prometheus_targets'),
      isCode('unsupported', /comes from Prometheus/),
    );
    const bad = join(rig.dir, 'bad-fleet.json');
    await writeSecret(
      bad,
      JSON.stringify({ prometheus: { url: rig.prometheus.url, selector: 'job=powerplan' } }),
    );
    const b = await testDeps({ POWERPLAN_FLEET_FILE: bad });
    try {
      await assert.rejects(
        status(b),
        isCode('invalid_input', /prometheus\.selector: must be label matchers/),
      );
    } finally {
      await b.cleanup();
    }
  });

  it('reports a stopped agent unreachable with the time of its last sample, then one no longer scraped', async () => {
    const third = rig.agents[2]!;
    await rig.scrapedAfterNow([third.name]);
    const stoppedAt = Date.now();
    await third.server.close();
    const s = await until('agent3 unreachable', async () => {
      const x = await status(fromProm);
      return x.hosts.find((y) => y.name === third.name)?.status === 'unreachable' && x;
    });
    // The failure leads the page.
    const h = s.hosts[0]!;
    assert.equal(h.name, third.name);
    assert.equal(h.error?.title, 'Scrape failed');
    assert.equal(h.plan, null);
    const last = Date.parse(h.lastSampleAt ?? '');
    assert.ok(
      last <= stoppedAt + 1000 && last > stoppedAt - 4000,
      `last sample ${h.lastSampleAt}, stopped ${new Date(stoppedAt).toISOString()}`,
    );
    assert.match(h.error!.detail, new RegExp(`last sample is from ${h.lastSampleAt}`));
    assert.deepEqual([s.summary.total, s.summary.ok, s.summary.unreachable], [3, 2, 1]);

    // Its target removed: its series go stale, the host stays listed within the lookback.
    await rig.writeTargets(['agent1', 'agent2']);
    const gone = await until('agent3 no longer scraped', async () => {
      const x = await status(fromProm, { hosts: ['agent3'] });
      return x.hosts[0]?.error?.title === 'Not scraped' && x.hosts[0];
    });
    assert.equal(gone.lastSampleAt, h.lastSampleAt);
  });
});
