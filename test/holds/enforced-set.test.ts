/**
 * A set against an enforced desired plan is refused (409) naming the desired plan, over REST, MCP,
 * the CLI and the fleet, unless forced, like a hold; the refusal says what force does, and a forced
 * set turns enforcement off (audited) so the plan set is not put back at the next check. Asking
 * for the desired plan itself, or a dry run with force, is never refused.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { loadConfig } from '../../src/config.ts';
import { buildDeps } from '../../src/deps.ts';
import { localCaller } from '../../src/domain/scopes.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { createMcpServer } from '../../src/surfaces/mcp/server.ts';
import { runCli } from '../support/processes.ts';
import { servedProcess } from '../support/server.ts';

describe('set against an enforced desired plan', () => {
  const s = servedProcess({ tokens: { ops: ['control'] }, env: { POWERPLAN_DESIRED_INTERVAL: '3600' } });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${s.tokens.ops}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const refusal =
    /The desired plan is High performance \(8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c\) and it is enforced/;

  it('REST: 409 naming the desired plan and what force does; the desired plan itself is allowed', async () => {
    const desired = await call('PUT', '/v1/desired', { plan: 'high-performance', enforce: true });
    assert.equal(desired.status, 200, JSON.stringify(desired.body));
    assert.equal((await call('PUT', '/v1/plans/active', { plan: 'high-performance' })).status, 200);

    for (const dryRun of [false, true]) {
      const r = await call('PUT', '/v1/plans/active', { plan: 'balanced', dryRun });
      assert.equal(r.status, 409, JSON.stringify(r.body));
      assert.equal(r.body.code, 'conflict');
      assert.match(r.body.detail, refusal);
      assert.match(r.body.detail, /force: true .*which sets the plan and turns enforcement off/);
      assert.deepEqual(r.body.details?.desired, {
        planId: SCHEME.highPerformance,
        planName: 'High performance',
        enforce: true,
        source: 'api',
      });
    }
    assert.equal(
      (await call('GET', '/v1/plans/active')).body.plan.id,
      SCHEME.highPerformance,
      'nothing changed',
    );
    const dry = await call('PUT', '/v1/plans/active', { plan: 'balanced', dryRun: true, force: true });
    assert.equal(dry.status, 200);
    assert.match(
      dry.body.warnings.join(' '),
      /Would turn off the enforcement of the desired plan High performance/,
    );
    assert.equal((await call('GET', '/v1/desired')).body.enforce, true, 'a dry run changes nothing');
  });

  it('MCP: the tool call is an error with the same detail', async () => {
    const deps = buildDeps(loadConfig({ ...s.t.env, POWERPLAN_LOG_LEVEL: 'silent' }));
    const server = createMcpServer(deps, localCaller);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const r = await client.callTool({ name: 'set_power_plan', arguments: { plan: 'power-saver' } });
      assert.equal(r.isError, true);
      assert.match(JSON.stringify(r.content), refusal);
    } finally {
      await client.close();
      deps.shutdown.abort();
    }
  });

  it('CLI: exit 1 with the detail in CLI words', async () => {
    const r = await runCli(['set', 'balanced'], s.t.env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, refusal);
    assert.match(
      r.stderr,
      /--force, which sets the plan and turns enforcement off.*powerplan desired set with --enforce/,
    );
    assert.doesNotMatch(r.stderr, /force: true|set_desired_power_plan/);
  });

  it('fleet: the host reports the refusal, and nothing changes there', async () => {
    const tokenFile = join(s.t.dir, 'ops.token');
    await writeFile(tokenFile, s.tokens.ops!, { mode: 0o600 });
    const fleet = join(s.t.dir, 'fleet.json');
    await writeFile(fleet, JSON.stringify({ hosts: [{ name: 'db1', url: s.server.url, tokenFile }] }), {
      mode: 0o600,
    });
    const r = await runCli(['fleet', 'set', 'balanced', '--fleet', fleet, '--json'], {
      ...s.t.env,
      POWERPLAN_STATE_DIR: join(s.t.dir, 'fleet-state'),
    });
    assert.equal(r.code, 1, r.stderr);
    const host = (
      JSON.parse(r.stdout) as { hosts: { name: string; status: string; error?: string; detail?: string }[] }
    ).hosts[0]!;
    assert.notEqual(host.status, 'ok');
    assert.match(JSON.stringify(host), refusal);
    assert.equal((await call('GET', '/v1/plans/active')).body.plan.id, SCHEME.highPerformance);
  });

  it('force sets the plan, turns enforcement off (audited) and says so; the checker leaves it', async () => {
    const r = await call('PUT', '/v1/plans/active', { plan: 'balanced', force: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.changed, true);
    assert.match(r.body.warnings.join(' '), /Enforcement of the desired plan High performance .* is now off/);
    const desired = (await call('GET', '/v1/desired')).body;
    assert.equal(desired.planId, SCHEME.highPerformance, 'the desired plan stays');
    assert.equal(desired.enforce, false);
    const audit = (await call('GET', '/v1/audit?since=1h')).body.records as {
      operation: string;
      // biome-ignore lint/suspicious/noExplicitAny: an audit record's input, as written
      input: any;
    }[];
    assert.ok(
      audit.some((a) => a.operation === 'set_desired_power_plan' && a.input.forcedBy === 'set_power_plan'),
      JSON.stringify(audit.slice(-3)),
    );
    // Without enforcement a set is no longer refused.
    assert.equal((await call('PUT', '/v1/plans/active', { plan: 'power-saver' })).status, 200);
  });
});
