/**
 * Checks shared by the MCP tests over every transport (in-memory, stdio, HTTP): the tool list
 * against the registry, and one tool call checked against the operation's output schema; an
 * in-memory client over fresh deps for the tests of one block.
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { type Caller, localCaller } from '../../src/domain/scopes.ts';
import type { Operation } from '../../src/operations/define.ts';
import { operations } from '../../src/operations/index.ts';
import { createMcpServer } from '../../src/surfaces/mcp/server.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { perBlock } from '../support/fixture.ts';

/**
 * The SDK lists zod schemas as draft-07 (`$schema` says so); the vocabulary zod emits is the same in
 * 2020-12, so the schemas are checked against the 2020-12 meta-schema without that marker.
 */
const as2020 = (schema: object): object => {
  const { $schema: _ignored, ...rest } = schema as Record<string, unknown>;
  return rest;
};

const ajv = new Ajv2020({ strict: false, allErrors: true });

/**
 * Every registry operation is listed once, as a tool with valid schemas and its annotations (the
 * fleet's operations all or none: they are listed only when a fleet is configured).
 */
export const checkToolList = async (
  client: Client,
  all: readonly Operation[],
): Promise<Map<string, Tool>> => {
  const { tools } = await client.listTools();
  const fleet = all.some((o) => o.fleet && tools.some((t) => t.name === o.name));
  const ops = all.filter((o) => fleet || !o.fleet);
  assert.deepEqual(
    tools.map((t) => t.name).sort(),
    ops.map((o) => o.name).sort(),
    'one tool per registry operation',
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const op of ops) {
    const tool = byName.get(op.name)!;
    assert.equal(tool.title, op.title);
    assert.equal(tool.description, op.description);
    assert.deepEqual(
      {
        readOnlyHint: tool.annotations?.readOnlyHint,
        destructiveHint: tool.annotations?.destructiveHint,
        idempotentHint: tool.annotations?.idempotentHint,
        openWorldHint: tool.annotations?.openWorldHint,
      },
      {
        readOnlyHint: op.annotations.readOnly,
        destructiveHint: op.annotations.destructive,
        idempotentHint: op.annotations.idempotent,
        openWorldHint: op.annotations.openWorld,
      },
      `${op.name} annotations`,
    );
    for (const [which, schema] of [
      ['inputSchema', tool.inputSchema],
      ['outputSchema', tool.outputSchema],
    ] as const) {
      assert.ok(schema, `${op.name} lists an ${which}`);
      assert.equal(schema.type, 'object', `${op.name} ${which} is an object schema, not a bare $ref`);
      assert.equal(
        ajv.validateSchema(as2020(schema)),
        true,
        `${op.name} ${which}: ${ajv.errorsText(ajv.errors)}`,
      );
    }
  }
  return byName;
};

/** Calls a tool that must succeed; checks structuredContent and the JSON text block. */
export const callOk = async (
  client: Client,
  tools: Map<string, Tool>,
  op: Operation,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> => {
  const result = (await client.callTool({ name: op.name, arguments: args })) as CallToolResult;
  const text = result.content.find((c) => c.type === 'text')?.text ?? '';
  assert.notEqual(result.isError, true, `${op.name} failed: ${text}`);
  const structured = result.structuredContent;
  assert.ok(structured, `${op.name} returns structuredContent`);
  op.output.parse(structured);
  const validate = ajv.compile(as2020(tools.get(op.name)!.outputSchema!));
  assert.equal(validate(structured), true, `${op.name} output: ${ajv.errorsText(validate.errors)}`);
  assert.deepEqual(JSON.parse(text), structured, `${op.name} text block carries the same JSON`);
  return structured;
};

/** Calls a tool that must fail; returns the error text. */
export const callError = async (
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> => {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(result.isError, true, `${name} with ${JSON.stringify(args)} is an error`);
  const text = result.content.find((c) => c.type === 'text')?.text ?? '';
  assert.ok(text.length > 0, 'the error says what went wrong');
  return text;
};

/** Read-only tools a generic check can call on any server; the fleet tools need a fleet (test/fleet). */
export const callableWithoutSetup = (op: Operation): boolean =>
  op.annotations.readOnly && !op.name.includes('fleet');

/** Arguments for the read-only tools a generic check can call on any transport. */
export const readOnlyArgs = (op: Operation): Record<string, unknown> =>
  op.name === 'list_benchmarks' ? { limit: 5 } : {};

/**
 * A short run_cpu_benchmark asking for progress: it succeeds, and two or more progress
 * notifications arrive, each further than the one before. Resolves with its result.
 */
export const benchmarkWithProgress = async (client: Client): Promise<CallToolResult> => {
  const seen: Progress[] = [];
  const result = (await client.callTool(
    { name: 'run_cpu_benchmark', arguments: { force: true, threads: 2, idleGapsMs: [20, 100] } },
    undefined,
    { onprogress: (p) => seen.push(p), timeout: 60_000 },
  )) as CallToolResult;
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.ok(seen.length >= 2, `progress notifications arrived (${seen.length})`);
  for (let i = 1; i < seen.length; i++)
    assert.ok(seen[i]!.progress > seen[i - 1]!.progress, 'progress increases');
  return result;
};

/** Calls every read-only tool that needs no arguments; returns their names. */
export const callReadOnly = async (client: Client, tools: Map<string, Tool>): Promise<string[]> => {
  const called: string[] = [];
  for (const op of operations.filter(callableWithoutSetup)) {
    if (!op.input.safeParse(readOnlyArgs(op)).success) continue;
    await callOk(client, tools, op, readOnlyArgs(op));
    called.push(op.name);
  }
  return called;
};

/** An in-memory MCP client connected to a server for `caller` over these deps. */
export const connect = async (t: TestDeps, caller: Caller = localCaller, ops?: readonly Operation[]) => {
  const server = createMcpServer(t.deps, caller, ops ? { operations: ops } : {});
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'powerplan-test', version: '0.0.0' });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  return { client, close: () => client.close() };
};

/** Fresh deps and an in-memory MCP client connected as `caller`, for the tests of one block. */
export const mcpPerBlock = (caller: Caller = localCaller) =>
  perBlock(
    async () => {
      const t = await testDeps();
      return { t, ...(await connect(t, caller)) };
    },
    async ({ t, close }) => {
      await close();
      await t.cleanup();
    },
  );
