import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { operationByName, operations } from '../../src/operations/index.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { binPath } from '../support/processes.ts';
import { servedProcess } from '../support/server.ts';
import { benchmarkWithProgress, callError, callOk, callReadOnly, checkToolList } from './mcp-checks.ts';

const newClient = () => new Client({ name: 'powerplan-test', version: '0.0.0' });

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

/** A raw POST to /mcp, so that Host and Origin can be set to what a rebinding page would send. */
const rawPost = (
  serverUrl: string,
  headers: Record<string, string>,
  body: unknown = initialize,
): Promise<number> =>
  new Promise((resolve, reject) => {
    const url = new URL(`${serverUrl}/mcp`);
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });

const setPlan = operationByName('set_power_plan')!;

describe('MCP over stdio (powerplan mcp)', () => {
  let t: TestDeps;
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = '';
  const transportErrors: Error[] = [];

  before(async () => {
    // Logging on: log lines must go to stderr and never corrupt the protocol on stdout.
    t = await testDeps({ POWERPLAN_LOG_LEVEL: 'debug' });
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [binPath, 'mcp'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...t.env },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
    client = newClient();
    client.onerror = (e) => transportErrors.push(e);
    await client.connect(transport);
  });
  after(async () => {
    await client.close();
    await t.cleanup();
  });

  it('lists every operation as a tool and answers read-only calls', async () => {
    const tools = await checkToolList(client, operations);
    const called = await callReadOnly(client, tools);
    assert.ok(called.includes('get_active_power_plan'), called.join());
  });

  it('set_power_plan dry run and change; bad arguments are isError', async () => {
    const tools = await checkToolList(client, operations);
    const dry = await callOk(client, tools, setPlan, { plan: 'power-saver', dryRun: true });
    assert.equal(dry.changed, true);
    const done = await callOk(client, tools, setPlan, { plan: 'power-saver' });
    assert.equal((done.after as { kind: string }).kind, 'power-saver');
    await callError(client, 'set_power_plan', { plan: '' });
  });

  it('keeps stdout for the protocol: logs arrive on stderr, no transport error', () => {
    assert.deepEqual(transportErrors, []);
    assert.match(stderr, /"msg":"mcp stdio ready"/);
  });
});

describe('MCP over Streamable HTTP (powerplan serve, /mcp)', () => {
  const served = servedProcess();

  const connect = async (headers: Record<string, string> = {}) => {
    const client = newClient();
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.server.url}/mcp`), { requestInit: { headers } }),
    );
    return client;
  };

  it('lists every operation, answers read-only calls, refuses bad arguments', async () => {
    const client = await connect();
    const tools = await checkToolList(client, operations);
    // Without a token a loopback caller may only read; the local administrator credential has control.
    assert.match(
      await callError(client, 'set_power_plan', { plan: 'high-performance', dryRun: true }),
      /needs the 'control' scope; the caller 'local' does not have it/,
    );
    await client.close();
    const admin = await connect(served.server.asAdmin);
    const called = await callReadOnly(admin, tools);
    assert.ok(called.includes('get_system_info') && called.includes('get_audit_log'), called.join());
    await callOk(admin, tools, setPlan, { plan: 'high-performance', dryRun: true });
    await callError(admin, 'set_power_plan', { plan: 'balanced', unknown: 1 });
    await admin.close();
  });

  it('streams progress notifications of the benchmark', async (ctx) => {
    if (!operationByName('run_cpu_benchmark')) return ctx.skip('no benchmark operation');
    const client = await connect(served.server.asAdmin);
    await benchmarkWithProgress(client);
    await client.close();
  });

  it('refuses a rebinding Host or a foreign Origin with 403, accepts loopback ones', async () => {
    const port = new URL(served.server.url).port;
    assert.equal(await rawPost(served.server.url, { host: 'evil.example' }), 403);
    assert.equal(
      await rawPost(served.server.url, {
        host: `evil.example:${port}`,
        origin: `http://evil.example:${port}`,
      }),
      403,
    );
    assert.equal(
      await rawPost(served.server.url, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' }),
      403,
    );
    assert.equal(await rawPost(served.server.url, { host: `127.0.0.1:${port}`, origin: 'null' }), 403);
    assert.equal(await rawPost(served.server.url, { host: `localhost:${port}` }), 200);
    assert.equal(
      await rawPost(served.server.url, { host: `localhost:${port}`, origin: `http://localhost:${port}` }),
      200,
    );
    assert.equal(
      await rawPost(served.server.url, { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` }),
      200,
    );
  });
});

describe('MCP over HTTP with tokens', () => {
  const served = servedProcess({ tokens: { reader: ['read'], operator: ['control'] } });

  const connect = async (token?: string) => {
    const client = newClient();
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.server.url}/mcp`), {
        requestInit: { headers: token ? { authorization: `Bearer ${token}` } : {} },
      }),
    );
    return client;
  };

  it('a read-only token reads but is refused set_power_plan', async () => {
    const client = await connect(served.tokens.reader);
    const tools = await checkToolList(client, operations);
    await callOk(client, tools, operationByName('get_active_power_plan')!, {});
    assert.match(
      await callError(client, 'set_power_plan', { plan: 'high-performance' }),
      /'control'.*reader/,
    );
    await client.close();
  });

  it('a control token may change the plan', async () => {
    const client = await connect(served.tokens.operator);
    const tools = await checkToolList(client, operations);
    const done = await callOk(client, tools, setPlan, { plan: 'high-performance' });
    assert.equal(done.changed, true);
    await client.close();
  });

  it('a token caller may use another name for the host (remote access through a DNS name)', async () => {
    const status = await rawPost(
      served.server.url,
      { host: 'powerplan.example.com', authorization: `Bearer ${served.tokens.reader}` },
      { jsonrpc: '2.0', id: 1, method: 'ping' },
    );
    assert.notEqual(status, 403);
    assert.ok(status < 300, `status ${status}`);
  });

  it('no token: the connection is refused', async () => {
    await assert.rejects(connect(), /401|nauthorized/);
  });
});
