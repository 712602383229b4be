/**
 * A plain tool call over HTTP is answered as one JSON body without building an MCP server; it must
 * answer exactly what the SDK path answers, and anything unusual must still reach the SDK's checks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { localCaller } from '../../src/domain/scopes.ts';
import { operations as registry } from '../../src/operations/index.ts';
import { mcpFactory } from '../../src/surfaces/mcp/server.ts';
import { testDeps } from '../support/deps.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { appOver } from '../support/server.ts';

const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  host: '127.0.0.1',
};

describe('MCP tool calls over HTTP', () => {
  const post = async (body: unknown, extra: Record<string, string> = {}) => {
    const res = await app.request('/mcp', {
      method: 'POST',
      headers: { ...headers, ...extra },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const json = res.headers.get('content-type')?.includes('event-stream')
      ? JSON.parse(/^data: (.*)$/m.exec(text)![1]!)
      : JSON.parse(text);
    return { status: res.status, type: res.headers.get('content-type') ?? '', json };
  };
  const call = (id: number | string, name: string, args: unknown, meta?: object) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  });

  const t = depsPerBlock();

  const app = appOver(t);

  it('a plain call and a call asking for progress (SDK, event stream) answer the same', async () => {
    const plain = await post(call(7, 'get_active_power_plan', {}));
    assert.equal(plain.status, 200);
    assert.match(plain.type, /application\/json/);
    const streamed = await post(call(7, 'get_active_power_plan', {}, { progressToken: 'p1' }));
    assert.match(streamed.type, /text\/event-stream/);
    assert.deepEqual(plain.json, streamed.json);
    assert.equal(plain.json.id, 7);
    assert.equal(plain.json.result.structuredContent.plan.kind, 'balanced');
  });

  it('errors answer as the SDK path does: unknown tool, bad arguments, scope', async () => {
    for (const [name, args] of [
      ['no_such_tool', {}],
      ['set_power_plan', { plan: 42 }],
      ['set_power_plan', { plan: 'no-such-plan', dryRun: true }],
    ] as const) {
      const plain = await post(call('a', name, args));
      const viaSdk = await post(call('a', name, args, { progressToken: 1 }));
      assert.equal(plain.json.result.isError, true, name);
      assert.deepEqual(plain.json, viaSdk.json, `${name} ${JSON.stringify(args)}`);
    }
  });

  it('unusual requests still meet the transport checks', async () => {
    const badVersion = await post(call(1, 'get_active_power_plan', {}), {
      'mcp-protocol-version': '1999-01-01',
    });
    assert.equal(badVersion.status, 400);
    assert.match(badVersion.json.error.message, /Unsupported protocol version/);
    const badAccept = await post(call(1, 'get_active_power_plan', {}), { accept: 'application/json' });
    assert.equal(badAccept.status, 406);
    const notRpc = await post({ jsonrpc: '1.0', id: 1, method: 'tools/call', params: { name: 'x' } });
    assert.equal(notRpc.status, 400);
    const res = await app.request('/mcp', { method: 'POST', headers, body: '{nope' });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32700);
  });

  it('a plain tool list answers what the SDK path answers, from the one serialized list', async () => {
    const list = (id: number, meta?: object) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/list',
      ...(meta ? { params: { _meta: meta } } : {}),
    });
    const plain = await post(list(3));
    assert.equal(plain.status, 200);
    assert.match(plain.type, /application\/json/);
    const viaSdk = await post(list(3, { progressToken: 'p' }));
    assert.match(viaSdk.type, /text\/event-stream/);
    assert.deepEqual(plain.json, viaSdk.json);
    assert.ok(plain.json.result.tools.some((x: { name: string }) => x.name === 'get_active_power_plan'));
    const badVersion = await post(list(4), { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(badVersion.status, 400, 'the plain path keeps the transport checks');
  });
});

describe('the MCP catalog', () => {
  it('is built once per service, whatever the number of servers, lists and calls', async () => {
    const t = await testDeps();
    try {
      // Every read of an operation's description is counted: building the catalog reads each once.
      let reads = 0;
      const operations = registry.map((op) => {
        const counted = Object.create(op) as typeof op;
        Object.defineProperty(counted, 'description', {
          get: () => {
            reads++;
            return op.description;
          },
        });
        return counted;
      });
      const kit = mcpFactory(t.deps, { operations });
      const first = kit.toolListJson();
      const afterBuild = reads;
      // Without a fleet, the fleet's operations are not listed.
      assert.ok(
        afterBuild >= operations.filter((op) => !op.fleet).length,
        'the catalog was not built from the operations',
      );
      const extra = { signal: new AbortController().signal, sendNotification: async () => {} };
      for (let i = 0; i < 20; i++) {
        kit.server(localCaller);
        assert.equal(kit.toolListJson(), first);
        await kit.callTool(localCaller, 'get_active_power_plan', {}, extra);
      }
      assert.equal(reads, afterBuild, 'the catalog was built again for a later server, list or call');
    } finally {
      await t.cleanup();
    }
  });
});
