/**
 * The fleet against live agents on loopback: five agents, one with a wrong token, one with a
 * read-only token, a URL where nothing listens and a host that never answers. Through REST (the
 * aggregator's own app), so the operations, scopes and schemas are those every surface uses.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FleetSetResult, FleetStatus, PrometheusTargets } from '../../src/domain/fleet.ts';
import { ActivePlan } from '../../src/domain/schemas.ts';
import { createLogger } from '../../src/lib/log.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { withMcpClient } from '../support/mcp.ts';
import { until } from '../support/until.ts';
import { type FleetRig, fleetRig } from './rig.ts';

const TIMEOUT_MS = 5_000;

describe('fleet over live agents', () => {
  let rig: FleetRig;
  let agg: TestDeps;
  let app: ReturnType<typeof createApp>;
  const logLines: string[] = [];

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const activeOn = async (name: string) => {
    const a = rig.agents.find((x) => x.name === name) ?? rig.wrongToken;
    return ActivePlan.parse(await a.deps.backend.getActive()).plan?.kind;
  };

  before(async () => {
    rig = await fleetRig(5);
    agg = await testDeps(
      { POWERPLAN_FLEET_FILE: rig.fleetFile, POWERPLAN_FLEET_TIMEOUT_MS: String(TIMEOUT_MS) },
      { log: createLogger('debug', (l) => logLines.push(l)) },
    );
    app = createApp(agg.deps);
  });
  after(async () => {
    await agg?.cleanup();
    await rig?.cleanup();
  });

  it('status: counts every host, the slow one timed out without holding up the others', async () => {
    const { status, body } = await call('GET', '/v1/fleet/status');
    assert.equal(status, 200, JSON.stringify(body));
    const s = FleetStatus.parse(body);
    // Each agent estimates its workload cost from this machine's own counters: whether it has one
    // depends on what else ran here since its last read. The ranking is checked against the hosts.
    const { costliest, ...counts } = s.summary;
    const estimated = s.hosts
      .filter((h) => typeof h.workloadAddedPercent === 'number')
      .map((h) => ({ name: h.name, workloadAddedPercent: h.workloadAddedPercent as number }))
      .sort((a, b) => b.workloadAddedPercent - a.workloadAddedPercent || a.name.localeCompare(b.name));
    assert.deepEqual(costliest ?? [], estimated);
    assert.deepEqual(counts, {
      total: 9,
      ok: 6,
      unreachable: 2,
      unauthorized: 1,
      error: 0,
      changeRecommended: s.summary.changeRecommended,
      byKind: { balanced: 6 },
      byAdvice: { keep: 6 - s.summary.changeRecommended, switch: s.summary.changeRecommended, none: 0 },
      byDrift: {},
    });
    assert.equal(s.matched, 9);
    assert.equal(s.nextCursor, null);
    const by = new Map(s.hosts.map((h) => [h.name, h]));
    const slow = by.get('slow')!;
    // The failures first (by name, none has a benchmark), then the hosts that answered.
    assert.deepEqual(
      [...by.keys()],
      [
        'dead',
        'slow',
        'wrongtoken',
        ...['agent1', 'agent2', 'agent3', 'agent4', 'agent5', 'readonly'].sort(),
      ],
    );
    for (const a of rig.agents) {
      const h = by.get(a.name)!;
      assert.equal(h.status, 'ok');
      assert.equal(h.plan?.kind, 'balanced');
      assert.equal(h.owner, 'simulated');
      assert.equal(h.canSet, true);
      assert.equal(h.holds, 0);
      assert.ok(h.recommendation?.summary);
      // Asked side by side with the slow host: each answered before the slow host's timeout.
      assert.ok(
        h.durationMs < slow.durationMs,
        `${a.name} answered in ${h.durationMs} ms, the slow host timed out after ${slow.durationMs} ms`,
      );
    }
    assert.equal(by.get('wrongtoken')!.status, 'unauthorized');
    assert.equal(by.get('wrongtoken')!.error?.status, 401);
    assert.equal(by.get('dead')!.status, 'unreachable');
    assert.match(by.get('dead')!.error!.detail, /ECONNREFUSED/);
    assert.equal(slow.status, 'unreachable');
    assert.equal(slow.error?.title, 'Timed out');
    assert.ok(rig.slowHits() >= 1, 'the slow host was asked');
    // The slow host never answers: the call ended because of the per-host timeout, which gave the
    // request up (its connection is closed, not left waiting).
    await until('the connection to the slow host closed', async () => rig.slowOpen() === 0);
    // Tokens are never part of an answer.
    assert.doesNotMatch(JSON.stringify(body), /pp_[A-Za-z0-9_-]{20}/);
  });

  it('status filters by tag and by name; an unknown name or tag is a clear error', async () => {
    const sql = FleetStatus.parse((await call('GET', '/v1/fleet/status?tags=sql')).body);
    assert.deepEqual(
      sql.hosts.map((h) => h.name),
      ['wrongtoken', 'agent1', 'agent3', 'agent5'],
    );
    const two = FleetStatus.parse((await call('GET', '/v1/fleet/status?hosts=agent2,agent4')).body);
    assert.deepEqual(
      two.hosts.map((h) => h.name),
      ['agent2', 'agent4'],
    );
    const both = FleetStatus.parse((await call('GET', '/v1/fleet/status?hosts=agent1,agent2&tags=sql')).body);
    assert.deepEqual(
      both.hosts.map((h) => h.name),
      ['agent1'],
    );
    const bad = await call('GET', '/v1/fleet/status?hosts=nosuch');
    assert.equal(bad.status, 400);
    assert.match(String(bad.body.detail), /no host named 'nosuch'/);
    const badTag = await call('GET', '/v1/fleet/status?tags=nosuch');
    assert.equal(badTag.status, 400);
    assert.match(String(badTag.body.detail), /no host has the tag 'nosuch'/);
  });

  it('a dry run reports per host and changes nothing', async () => {
    const { status, body } = await call('PUT', '/v1/fleet/plans/active', {
      plan: 'high-performance',
      dryRun: true,
    });
    assert.equal(status, 200, JSON.stringify(body));
    const r = FleetSetResult.parse(body);
    assert.equal(r.summary.total, 9);
    assert.equal(r.summary.changed, 5);
    assert.equal(r.summary.failed, 4, 'wrong token, read-only token, dead, slow');
    assert.equal(r.hosts.find((h) => h.name === 'readonly')?.status, 'unauthorized');
    for (const a of rig.agents) {
      const h = r.hosts.find((x) => x.name === a.name)!;
      assert.equal(h.changed, true);
      assert.equal(h.after?.kind, 'high-performance');
      assert.equal(await activeOn(a.name), 'balanced', `${a.name} unchanged by the dry run`);
    }
  });

  it('set reaches exactly the named hosts, then exactly the tagged ones', async () => {
    const named = FleetSetResult.parse(
      (await call('PUT', '/v1/fleet/plans/active', { plan: 'high-performance', hosts: ['agent2', 'agent3'] }))
        .body,
    );
    assert.deepEqual(
      named.hosts.map((h) => [h.name, h.changed]),
      [
        ['agent2', true],
        ['agent3', true],
      ],
    );
    assert.deepEqual(await Promise.all(rig.agents.map((a) => activeOn(a.name))), [
      'balanced',
      'high-performance',
      'high-performance',
      'balanced',
      'balanced',
    ]);
    const tagged = FleetSetResult.parse(
      (await call('PUT', '/v1/fleet/plans/active', { plan: 'power-saver', tags: ['web'] })).body,
    );
    assert.deepEqual(
      tagged.hosts.map((h) => h.name),
      ['agent2', 'agent4'],
    );
    assert.deepEqual(await Promise.all(rig.agents.map((a) => activeOn(a.name))), [
      'balanced',
      'power-saver',
      'high-performance',
      'power-saver',
      'balanced',
    ]);
    // The status after a change is not served from the cache.
    const s = FleetStatus.parse((await call('GET', '/v1/fleet/status?hosts=agent2')).body);
    assert.equal(s.hosts[0]?.plan?.kind, 'power-saver');
    // Each agent audited its own change under the token the fleet file gave.
    const audit = (await rig.agents[1]!.deps.store.readLines('audit.jsonl')) as {
      caller: string;
      result: string;
    }[];
    assert.deepEqual(
      audit.map((a) => [a.caller, a.result]),
      [
        ['fleet', 'changed'],
        ['fleet', 'changed'],
      ],
    );
    assert.equal(
      (await rig.agents[0]!.deps.store.readLines('audit.jsonl')).length,
      0,
      'agent1 was not touched',
    );
  });

  it('set with an unknown host changes nothing anywhere', async () => {
    const before = await Promise.all(rig.agents.map((a) => activeOn(a.name)));
    const r = await call('PUT', '/v1/fleet/plans/active', { plan: 'balanced', hosts: ['agent1', 'typo'] });
    assert.equal(r.status, 400);
    assert.deepEqual(await Promise.all(rig.agents.map((a) => activeOn(a.name))), before);
  });

  it('needs the same scopes as the single-host operations', async () => {
    const { runOperation } = await import('../../src/operations/run.ts');
    const { operationByName } = await import('../../src/operations/index.ts');
    const ctx = {
      ...agg.deps,
      caller: { name: 'reader', scopes: ['read' as const] },
      signal: new AbortController().signal,
    };
    await assert.doesNotReject(runOperation(operationByName('list_fleet_hosts')!, {}, ctx));
    await assert.rejects(
      runOperation(operationByName('set_fleet_power_plan')!, { plan: 'balanced', dryRun: true }, ctx),
      /needs the 'control' scope/,
    );
    assert.equal(operationByName('get_fleet_status')!.scope, operationByName('get_active_power_plan')!.scope);
    assert.equal(operationByName('set_fleet_power_plan')!.scope, operationByName('set_power_plan')!.scope);
  });

  it('hosts and Prometheus targets list the fleet without tokens or file paths', async () => {
    const hosts = await call('GET', '/v1/fleet/hosts');
    assert.equal(hosts.status, 200);
    const text = JSON.stringify(hosts.body);
    assert.doesNotMatch(text, /\.token|pp_/);
    assert.equal((hosts.body.hosts as unknown[]).length, 9);
    const targets = await call('GET', '/v1/fleet/prometheus-targets?tags=web');
    assert.equal(targets.status, 200);
    const { groups } = PrometheusTargets.parse(targets.body);
    assert.deepEqual(
      groups.map((g) => g.labels.fleet_host),
      ['agent2', 'agent4'],
    );
    assert.equal(groups[0]!.labels.__metrics_path__, '/metrics');
    assert.equal(groups[0]!.labels.__scheme__, 'http');
    assert.equal(groups[0]!.targets[0], new URL(rig.agents[1]!.server.url).host);
  });

  it('the MCP tools of the same names answer the same, and the fleet prompt names them', async () => {
    await withMcpClient(agg.deps, async (client) => {
      const r = await client.callTool({ name: 'get_fleet_status', arguments: { tags: ['web'] } });
      assert.notEqual(r.isError, true, JSON.stringify(r.content));
      const s = FleetStatus.parse(r.structuredContent);
      assert.deepEqual(
        s.hosts.map((h) => [h.name, h.status]),
        [
          ['agent2', 'ok'],
          ['agent4', 'ok'],
        ],
      );
      const bad = await client.callTool({
        name: 'set_fleet_power_plan',
        arguments: { plan: 'balanced', hosts: ['typo'] },
      });
      assert.equal(bad.isError, true);
      const prompt = await client.getPrompt({ name: 'check_fleet_power', arguments: { tags: 'sql' } });
      const text = (prompt.messages[0]!.content as { text: string }).text;
      assert.match(text, /get_fleet_status with tags: \[sql\]/);
      assert.match(text, /set_fleet_power_plan .*dryRun: true first/s);
    });
  });

  it('logged the fan-out without any token', async () => {
    assert.ok(
      logLines.some((l) => l.includes('"fleet set"')),
      'the changes were logged',
    );
    const tokens = (
      await Promise.all(rig.agents.map((a) => readFile(join(rig.dir, `${a.name}.token`), 'utf8')))
    ).map((t) => t.trim());
    for (const line of logLines)
      for (const token of tokens) assert.ok(!line.includes(token), 'a token was logged');
  });
});
