/** The hold and desired-state tools over MCP (the SDK's own client, in memory): same names, same rules. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { mcpPerBlock } from '../surfaces/mcp-checks.ts';

describe('holds and desired state over MCP', () => {
  const mcp = mcpPerBlock();

  const tool = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await mcp.client.callTool({ name, arguments: args });
    return {
      isError: r.isError === true,
      data: r.structuredContent as unknown,
      text: JSON.stringify(r.content),
    };
  };

  it('lists the five tools', async () => {
    const names = (await mcp.client.listTools()).tools.map((x) => x.name);
    for (const n of [
      'hold_power_plan',
      'release_power_plan',
      'list_holds',
      'get_desired_state',
      'set_desired_power_plan',
    ])
      assert.ok(names.includes(n), n);
  });

  it('holds, refuses a set, releases and sets a desired plan', async () => {
    const h = await tool('hold_power_plan', { plan: 'high-performance', for: '1h', reason: 'index rebuild' });
    assert.equal(h.isError, false, h.text);
    const hold = (h.data as { hold: { id: string; planId: string } }).hold;
    assert.equal(hold.planId, SCHEME.highPerformance);

    const set = await tool('set_power_plan', { plan: 'balanced' });
    assert.equal(set.isError, true);
    assert.match(set.text, /held/);

    const bad = await tool('hold_power_plan', { plan: 'balanced', for: '1 hour' });
    assert.equal(bad.isError, true);

    const listed = await tool('list_holds');
    assert.equal((listed.data as { holds: unknown[] }).holds.length, 1);
    const released = await tool('release_power_plan', { id: hold.id });
    assert.equal((released.data as { restored: boolean }).restored, true);

    const d = await tool('set_desired_power_plan', { plan: 'power-saver' });
    assert.equal((d.data as { status: string }).status, 'drift');
    const got = await tool('get_desired_state');
    assert.equal((got.data as { planId: string }).planId, SCHEME.powerSaver);
  });
});
