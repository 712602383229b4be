/**
 * The status read model: one read per scrape of each source (the backend, the hold journal), the
 * advice worked out once per plan and benchmark, a failing part carried as its error while the
 * others stand, and the same read behind /metrics and the MCP status resource.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { TextResourceContents } from '@modelcontextprotocol/sdk/types.js';
import { localCaller } from '../../src/domain/scopes.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { createMcpServer, STATUS_URI } from '../../src/surfaces/mcp/server.ts';
import { call } from '../support/call.ts';
import { counted } from '../support/counted.ts';
import { depsPerBlock } from '../support/fixture.ts';

const readStatus = async (t: ReturnType<typeof depsPerBlock>) => {
  const server = createMcpServer(t.deps, localCaller);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'status-test', version: '0.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  try {
    const { contents } = await client.readResource({ uri: STATUS_URI });
    return JSON.parse((contents[0] as TextResourceContents).text) as Record<string, unknown>;
  } finally {
    await client.close();
  }
};

describe('the status read model', () => {
  const t = depsPerBlock();

  it('a scrape reads the backend once and the hold journal once; the advice is kept per plan', async () => {
    const { hold } = await call<{ hold: { id: string } }>(t.deps, 'hold_power_plan', {
      plan: 'high-performance',
      for: '10m',
    });
    const app = createApp(t.deps);
    const text = async () => (await app.request('/metrics')).text();
    await text(); // the first read works out the advice
    const active = counted(t.deps.backend, 'getActive');
    const holds = counted(t.deps.holds, 'snapshot');
    const list = counted(t.deps.bench, 'list');
    try {
      const body = await text();
      assert.equal(active.calls, 1, 'one read of the plan in force');
      assert.equal(holds.calls, 1, 'one read of the holds for both hold series');
      assert.equal(list.calls, 0, 'the advice of the same plan and benchmark is not worked out again');
      assert.match(body, /^powerplan_holds_active 1$/m);
      assert.match(body, /^powerplan_hold_expiry_seconds\{hold="next"\} \d/m);
      assert.match(body, /^powerplan_recommended_plan_info\{.*\} 1$/m);
    } finally {
      for (const c of [active, holds, list]) c.restore();
      await call(t.deps, 'release_power_plan', { id: hold.id });
    }
  });

  it('a failing backend leaves its parts empty and the others standing, on /metrics and MCP', async () => {
    const backend = t.deps.backend;
    const getActive = backend.getActive;
    backend.getActive = () => Promise.reject(new Error('the power service does not answer'));
    try {
      const body = await (await createApp(t.deps).request('/metrics')).text();
      assert.match(body, /^powerplan_backend_up 0$/m);
      assert.doesNotMatch(body, /^powerplan_active_plan_info\{/m);
      assert.doesNotMatch(body, /^powerplan_plan_settable /m);
      assert.doesNotMatch(body, /^powerplan_recommended_plan_info\{/m, 'no advice without the plan');
      assert.match(body, /^powerplan_plan_changes_total \d+$/m);
      assert.match(body, /^powerplan_holds_active \d+$/m);

      const status = await readStatus(t);
      const problem = (status.activePlan as { error?: { detail?: string } }).error;
      assert.ok(problem?.detail, `the active plan part carries its problem: ${JSON.stringify(status)}`);
      assert.ok((status.recommendation as { error?: unknown }).error, 'the advice fails with it');
      assert.ok('latestBenchmark' in status && !(status.latestBenchmark as { error?: unknown })?.error);
    } finally {
      backend.getActive = getActive;
    }
    const recovered = await readStatus(t);
    assert.equal(
      (recovered.activePlan as { plan?: { id: string } }).plan?.id,
      (await backend.getActive()).plan?.id,
    );
  });
});
