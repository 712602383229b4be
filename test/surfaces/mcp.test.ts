import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type {
  CallToolResult,
  GetPromptResult,
  Progress,
  TextResourceContents,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ActivePlan } from '../../src/domain/schemas.ts';
import { localCaller } from '../../src/domain/scopes.ts';
import {
  defineOperation,
  type Operation,
  type OperationContext,
  readOnly,
} from '../../src/operations/define.ts';
import { operationByName, operations } from '../../src/operations/index.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { STATUS_URI } from '../../src/surfaces/mcp/server.ts';
import { depsPerBlock } from '../support/fixture.ts';
import {
  benchmarkWithProgress,
  callError,
  callOk,
  callReadOnly,
  checkToolList,
  connect,
  mcpPerBlock,
} from './mcp-checks.ts';

const op = (name: string): Operation => {
  const found = operationByName(name);
  assert.ok(found, `${name} is in the registry`);
  return found;
};

describe('MCP server (in-memory, SDK client)', () => {
  const mcp = mcpPerBlock();
  let tools: Map<string, Tool>;
  before(async () => {
    tools = await checkToolList(mcp.client, operations);
  });

  it('identifies itself and tells the model how to use the tools', () => {
    assert.equal(mcp.client.getServerVersion()?.name, 'powerplan');
    assert.match(mcp.client.getInstructions() ?? '', /dryRun: true/);
  });

  it('calls every read-only tool that needs no arguments and checks its structured content', async () => {
    const called = await callReadOnly(mcp.client, tools);
    assert.ok(called.includes('get_system_info') && called.includes('get_active_power_plan'), called.join());
  });

  it('set_power_plan: a dry run changes nothing, then the change is made', async () => {
    const set = op('set_power_plan');
    const before = ActivePlan.parse(await callOk(mcp.client, tools, op('get_active_power_plan'), {}));
    assert.equal(before.plan?.kind, 'balanced');
    const dry = await callOk(mcp.client, tools, set, { plan: 'high-performance', dryRun: true });
    assert.equal(dry.dryRun, true);
    assert.equal(dry.changed, true);
    const still = ActivePlan.parse(await callOk(mcp.client, tools, op('get_active_power_plan'), {}));
    assert.equal(still.plan?.id, before.plan?.id);
    const done = await callOk(mcp.client, tools, set, { plan: 'high-performance' });
    assert.equal(done.changed, true);
    const now = ActivePlan.parse(await callOk(mcp.client, tools, op('get_active_power_plan'), {}));
    assert.equal(now.plan?.kind, 'high-performance');
    const again = await callOk(mcp.client, tools, set, { plan: 'balanced' });
    assert.equal(again.changed, true);
  });

  it('an operation error is isError with the detail REST gives', async () => {
    const text = await callError(mcp.client, 'set_power_plan', { plan: 'no-such-plan', dryRun: true });
    const res = await createApp(mcp.t.deps).request('/v1/plans/active', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'no-such-plan', dryRun: true }),
    });
    assert.equal(res.status, 404);
    assert.equal(text, ((await res.json()) as { detail: string }).detail);
  });

  it('bad arguments are isError, not a protocol failure', async () => {
    assert.match(await callError(mcp.client, 'set_power_plan', {}), /plan/);
    assert.match(await callError(mcp.client, 'set_power_plan', { plan: 42 }), /plan/);
    assert.match(await callError(mcp.client, 'set_power_plan', { plan: 'balanced', bogus: true }), /bogus/);
    assert.match(await callError(mcp.client, 'no_such_tool', {}), /no_such_tool/);
  });

  it('run_cpu_benchmark reports progress; its result is then listed and readable', async (ctx) => {
    if (!operationByName('run_cpu_benchmark')) return ctx.skip('no benchmark operation');
    const result = await benchmarkWithProgress(mcp.client);
    const run = op('run_cpu_benchmark').output.parse(result.structuredContent) as { id: string };

    const fetched = await callOk(mcp.client, tools, op('get_benchmark'), { id: run.id });
    assert.equal(fetched.id, run.id);
    const listed = (await callOk(mcp.client, tools, op('list_benchmarks'), { limit: 5 })) as {
      benchmarks: { id: string }[];
    };
    assert.equal(listed.benchmarks[0]?.id, run.id);

    const status = await readStatus(mcp.client);
    assert.equal((status.latestBenchmark as { id: string }).id, run.id);
  });

  it('the status resource holds the active plan', async () => {
    const { resources } = await mcp.client.listResources();
    const listed = resources.find((r) => r.uri === STATUS_URI);
    assert.equal(listed?.mimeType, 'application/json');
    const status = await readStatus(mcp.client);
    const active = ActivePlan.parse(status.activePlan);
    assert.equal(active.plan?.id, (await mcp.t.deps.backend.getActive()).plan?.id);
    assert.ok(!Number.isNaN(Date.parse(String(status.generatedAt))));
    if (operationByName('list_benchmarks')) assert.ok('latestBenchmark' in status);
    assert.equal('recommendation' in status, Boolean(operationByName('get_recommendation')));
  });

  it('the check_server_power prompt walks through the check, changes only on request', async () => {
    const { prompts } = await mcp.client.listPrompts();
    const listed = prompts.find((p) => p.name === 'check_server_power');
    assert.deepEqual(
      listed?.arguments?.map((a) => [a.name, a.required ?? false]),
      [['workload', false]],
    );
    const withWorkload = await mcp.client.getPrompt({
      name: 'check_server_power',
      arguments: { workload: 'PostgreSQL OLTP' },
    });
    const text = promptText(withWorkload);
    assert.match(text, /PostgreSQL OLTP/);
    assert.match(text, /get_active_power_plan/);
    assert.match(text, /dryRun: true/);
    assert.match(text, /only after I agree/);
    const plain = await mcp.client.getPrompt({ name: 'check_server_power' });
    assert.doesNotMatch(promptText(plain), /undefined/);
  });
});

const promptText = (result: GetPromptResult): string => {
  assert.equal(result.messages.length, 1);
  const content = result.messages[0]!.content;
  assert.equal(content.type, 'text');
  return content.type === 'text' ? content.text : '';
};

const readStatus = async (client: Client): Promise<Record<string, unknown>> => {
  const { contents } = await client.readResource({ uri: STATUS_URI });
  assert.equal(contents.length, 1);
  return JSON.parse((contents[0] as TextResourceContents).text);
};

describe('MCP server for a caller with only the read scope', () => {
  const mcp = mcpPerBlock({ name: 'reader', scopes: ['read'] });

  it('is refused set_power_plan (even a dry run) and the plan stays', async () => {
    const before = (await mcp.t.deps.backend.getActive()).plan?.id;
    assert.match(
      await callError(mcp.client, 'set_power_plan', { plan: 'high-performance' }),
      /control.*reader/,
    );
    assert.match(
      await callError(mcp.client, 'set_power_plan', { plan: 'high-performance', dryRun: true }),
      /control/,
    );
    assert.equal((await mcp.t.deps.backend.getActive()).plan?.id, before);
  });

  it('is refused the benchmark but may read', async (ctx) => {
    const tools = await checkToolList(mcp.client, operations);
    await callOk(mcp.client, tools, op('get_active_power_plan'), {});
    if (!operationByName('run_cpu_benchmark')) return ctx.skip('no benchmark operation');
    assert.match(await callError(mcp.client, 'run_cpu_benchmark', { force: true }), /benchmark/);
  });
});

describe('MCP progress and cancellation (test-only operations)', () => {
  const t = depsPerBlock();
  let onStart: () => void = () => {};
  let onAbort: (reason: unknown) => void = () => {};

  /** A test-only operation: no input, `{ done }` out, read-only, at GET /x/<name>. */
  const testOperation = (
    name: string,
    description: string,
    handler: (input: object, ctx: OperationContext) => Promise<{ done: boolean }>,
  ) =>
    defineOperation({
      input: z.object({}).strict(),
      output: z.object({ done: z.boolean() }),
      annotations: readOnly,
      scope: 'read',
      cli: { command: ['x'] },
      name,
      title: name[0]!.toUpperCase() + name.slice(1),
      description,
      http: { method: 'GET', path: `/x/${name}` },
      handler,
    });
  const stepper = testOperation('stepper', 'Reports three steps.', async (_input, ctx) => {
    ctx.progress({ progress: 1, total: 3, message: 'one' });
    ctx.progress({ progress: 2, total: 3, message: 'two' });
    ctx.progress({ progress: 2, total: 3, message: 'two again' });
    ctx.progress({ progress: 3, total: 3, message: 'three' });
    return { done: true };
  });
  const waiter = testOperation(
    'waiter',
    'Waits until cancelled.',
    (_input, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener(
          'abort',
          () => {
            onAbort(ctx.signal.reason);
            resolve({ done: false });
          },
          { once: true },
        );
        onStart();
      }),
  );

  it('maps ctx.progress to progress notifications, increasing only', async () => {
    const { client, close } = await connect(t, localCaller, [stepper, waiter]);
    const seen: Progress[] = [];
    const result = (await client.callTool({ name: 'stepper', arguments: {} }, undefined, {
      onprogress: (p) => seen.push(p),
    })) as CallToolResult;
    assert.deepEqual(result.structuredContent, { done: true });
    assert.deepEqual(
      seen.map((p) => [p.progress, p.total, p.message]),
      [
        [1, 3, 'one'],
        [2, 3, 'two'],
        [3, 3, 'three'],
      ],
    );
    await close();
  });

  it('without a progress token no notification is sent and the call still succeeds', async () => {
    const { client, close } = await connect(t, localCaller, [stepper]);
    let notifications = 0;
    client.fallbackNotificationHandler = async () => {
      notifications++;
    };
    const result = (await client.callTool({ name: 'stepper', arguments: {} })) as CallToolResult;
    assert.deepEqual(result.structuredContent, { done: true });
    assert.equal(notifications, 0);
    await close();
  });

  it('a cancelled request aborts the operation signal', async () => {
    const { client, close } = await connect(t, localCaller, [waiter]);
    const started = new Promise<void>((r) => {
      onStart = r;
    });
    const aborted = new Promise((r) => {
      onAbort = r;
    });
    const controller = new AbortController();
    const call = client.callTool({ name: 'waiter', arguments: {} }, undefined, { signal: controller.signal });
    await started;
    controller.abort('user cancelled');
    await assert.rejects(call);
    assert.ok(await aborted, 'the operation saw the cancellation');
    await close();
  });

  it('lists only the operations it was given', async () => {
    const { client, close } = await connect(t, localCaller, [stepper]);
    assert.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['stepper'],
    );
    await close();
  });
});
