/**
 * The MCP catalog stays lean: tools/list within 64 KB in all, the part a model is shown (name,
 * description, input schema) within 1.5 KB per tool on average, with and without a fleet. The
 * fleet tools are listed only when a fleet is configured; otherwise the server's instructions say
 * how to configure one.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { operations } from '../../src/operations/index.ts';
import { mcpFactory } from '../../src/surfaces/mcp/server.ts';
import { writeSecret } from '../fleet/rig.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { withMcpClient } from '../support/mcp.ts';

const fleetTools = operations.filter((op) => op.fleet).map((op) => op.name);

describe('MCP catalog: size and the fleet tools', () => {
  let plain: TestDeps;
  let withFleet: TestDeps;
  before(async () => {
    plain = await testDeps();
    const fleetFile = join(plain.dir, 'fleet.json');
    await writeSecret(fleetFile, JSON.stringify({ hosts: [{ name: 'db1', url: 'http://127.0.0.1:9' }] }));
    withFleet = await testDeps({ POWERPLAN_FLEET_FILE: fleetFile });
  });
  after(async () => {
    await withFleet?.cleanup();
    await plain?.cleanup();
  });

  const sizes = (t: TestDeps) => {
    const json = mcpFactory(t.deps).toolListJson();
    const tools = (
      JSON.parse(json) as { tools: { name: string; description: string; inputSchema: unknown }[] }
    ).tools;
    const shown = tools.map((x) =>
      Buffer.byteLength(
        JSON.stringify({ name: x.name, description: x.description, inputSchema: x.inputSchema }),
      ),
    );
    return {
      bytes: Buffer.byteLength(json),
      tools,
      shownAverage: shown.reduce((a, b) => a + b, 0) / tools.length,
    };
  };

  it('tools/list is within 64 KB and 1.5 KB shown per tool, with a fleet (every tool) and without', () => {
    for (const t of [withFleet, plain]) {
      const s = sizes(t);
      assert.ok(s.bytes <= 64 * 1024, `tools/list is ${s.bytes} bytes`);
      assert.ok(s.shownAverage <= 1536, `${s.shownAverage.toFixed(0)} bytes shown per tool`);
    }
    assert.equal(sizes(withFleet).tools.length, operations.length, 'with a fleet, every operation is a tool');
  });

  it('lists the fleet tools only with a fleet; without one, the instructions say how to configure it', async () => {
    assert.equal(fleetTools.length, 4);
    const listed = async (t: TestDeps) =>
      withMcpClient(t.deps, async (client) => ({
        names: (await client.listTools()).tools.map((x) => x.name),
        instructions: client.getInstructions() ?? '',
      }));
    const none = await listed(plain);
    assert.deepEqual(
      none.names.filter((n) => fleetTools.includes(n)),
      [],
    );
    assert.ok(none.names.includes('get_active_power_plan'));
    assert.match(none.instructions, /No fleet is configured.*POWERPLAN_FLEET_FILE.*docs\/FLEET\.md/);
    const some = await listed(withFleet);
    assert.deepEqual(some.names.filter((n) => fleetTools.includes(n)).sort(), [...fleetTools].sort());
    assert.match(some.instructions, /through the fleet tools \(get_fleet_status, /);
    assert.doesNotMatch(some.instructions, /No fleet is configured/);
  });
});
