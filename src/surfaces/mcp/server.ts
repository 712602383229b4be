/**
 * The MCP surface: one tool per operation of the registry (same name, title, description, schemas
 * and annotations), a `powerplan://status` resource and a `check_server_power` prompt. Calls go
 * through runOperation, so scopes, validation and error texts are those of REST. Transports live
 * elsewhere (stdio.ts, Streamable HTTP in http.ts); this module is only ever imported
 * lazily, because the SDK is heavy.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import type { Caller } from '../../domain/scopes.ts';
import type { Operation, Progress } from '../../operations/define.ts';
import { operations as registry } from '../../operations/index.ts';
import { runOperation } from '../../operations/run.ts';
import { version } from '../../version.ts';
import { normalizeError, toProblem } from '../errors.ts';

export const STATUS_URI = 'powerplan://status';

const instructions = [
  'powerplan reads, measures and sets the power plan of the machine it runs on.',
  'Start with the read-only tools (get_system_info, get_active_power_plan, list_power_plans).',
  'run_cpu_benchmark loads every CPU for seconds: run it only when the user agrees.',
  'set_power_plan changes the machine: call it only when the user asks for a change, and call it',
  'with dryRun: true first to show what would change.',
].join(' ');

/** What the request handlers of the SDK hand us that we use. */
interface RequestExtra {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: {
    method: 'notifications/progress';
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
}

/**
 * MCP progress for one request, when the client asked for it (sent a progress token). The protocol
 * requires progress to increase, so a repeated or smaller value is dropped rather than sent.
 */
const progressFor = (extra: RequestExtra): ((p: Progress) => void) | undefined => {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  let last = Number.NEGATIVE_INFINITY;
  return (p) => {
    if (!(p.progress > last)) return;
    last = p.progress;
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: p.progress,
          ...(p.total !== undefined ? { total: p.total } : {}),
          ...(p.message !== undefined ? { message: p.message } : {}),
        },
      })
      // A client that went away cannot be told; the operation itself carries on or is cancelled.
      .catch(() => {});
  };
};

/**
 * The SDK lists a schema carrying a root `.meta({ id })` as a bare `$ref`, which its own client
 * rejects. An extension (unlike `clone()`, which inherits metadata) has no root id and lists as a
 * plain object schema; nested ids stay definitions. `safeExtend` keeps refinements.
 */
const withoutRootId = (schema: z.ZodType): z.ZodObject | undefined =>
  schema instanceof z.ZodObject ? schema.safeExtend({}) : undefined;

/**
 * A signal aborted by any of `sources`, unlinked by `release` once the call is answered. Not
 * AbortSignal.any: on Node 20 its dependents of a long-lived source (the shutdown signal of a
 * stdio server that runs for days) are kept for the life of that source.
 */
const linkedSignal = (sources: AbortSignal[]): { signal: AbortSignal; release: () => void } => {
  const controller = new AbortController();
  const aborted = sources.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const onAbort = (e: Event) => controller.abort((e.target as AbortSignal).reason);
  for (const s of sources) s.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      for (const s of sources) s.removeEventListener('abort', onAbort);
    },
  };
};

export interface McpServerOptions {
  /** The operations offered as tools; the registry by default (tests pass their own). */
  operations?: readonly Operation[];
}

/** An MCP server for one caller: the caller's scopes decide which tools succeed. */
export const createMcpServer = (deps: Deps, caller: Caller, options: McpServerOptions = {}): McpServer => {
  const ops = options.operations ?? registry;
  const server = new McpServer({ name: 'powerplan', title: 'powerplan', version }, { instructions });

  const run = async (op: Operation, input: unknown, extra: RequestExtra) => {
    const progress = progressFor(extra);
    const { signal, release } = linkedSignal([extra.signal, deps.shutdown.signal]);
    try {
      return await runOperation(op, input, { ...deps, caller, signal, ...(progress ? { progress } : {}) });
    } finally {
      release();
    }
  };

  const failure = (op: string, e: unknown): CallToolResult => {
    const err = normalizeError(e);
    if (err.code === 'internal') {
      deps.log.error('unexpected error', {
        tool: op,
        error: String(err.cause ?? e),
        stack: (err.cause as Error | undefined)?.stack,
      });
    }
    const problem = toProblem(err);
    return { isError: true, content: [{ type: 'text', text: problem.detail }], _meta: { problem } };
  };

  for (const op of ops) {
    const outputSchema = withoutRootId(op.output);
    server.registerTool(
      op.name,
      {
        title: op.title,
        description: op.description,
        inputSchema: withoutRootId(op.input),
        ...(outputSchema ? { outputSchema } : {}),
        annotations: {
          title: op.title,
          readOnlyHint: op.annotations.readOnly,
          destructiveHint: op.annotations.destructive,
          idempotentHint: op.annotations.idempotent,
          openWorldHint: false,
        },
      },
      async (args: unknown, extra: RequestExtra): Promise<CallToolResult> => {
        try {
          const output = await run(op, args, extra);
          return {
            content: [{ type: 'text', text: JSON.stringify(output, null, 2) }],
            ...(outputSchema ? { structuredContent: output as Record<string, unknown> } : {}),
          };
        } catch (e) {
          return failure(op.name, e);
        }
      },
    );
  }

  const byName = (name: string) => ops.find((o) => o.name === name);

  /** One part of the status: the operation's output, its problem, or absent when not offered. */
  const part = async (name: string, input: unknown, extra: RequestExtra, pick = (o: unknown) => o) => {
    const op = byName(name);
    if (!op) return undefined;
    try {
      return pick(await run(op, input, extra));
    } catch (e) {
      return { error: toProblem(normalizeError(e)) };
    }
  };

  server.registerResource(
    'status',
    STATUS_URI,
    {
      title: 'Power status',
      description:
        'The current state in one read: the active plan with its processor settings and owner, the latest ' +
        'stored CPU benchmark (headline figures) and the recommendation, where this service offers them. ' +
        'Reading it changes nothing and runs no benchmark.',
      mimeType: 'application/json',
    },
    async (uri, extra) => {
      const [active, latest, recommendation] = await Promise.all([
        part('get_active_power_plan', {}, extra),
        part(
          'list_benchmarks',
          { limit: 1 },
          extra,
          (o) => (o as { benchmarks?: unknown[] }).benchmarks?.[0] ?? null,
        ),
        part('get_recommendation', {}, extra),
      ]);
      const status = {
        generatedAt: new Date().toISOString(),
        activePlan: active ?? null,
        ...(latest !== undefined ? { latestBenchmark: latest } : {}),
        ...(recommendation !== undefined ? { recommendation } : {}),
      };
      return {
        contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(status, null, 2) }],
      };
    },
  );

  server.registerPrompt(
    'check_server_power',
    {
      title: "Check this server's power plan",
      description:
        'Walks through checking whether the power plan suits this server: read the system and the active ' +
        'plan, measure only with consent, recommend, and change the plan only when explicitly asked.',
      argsSchema: {
        workload: z
          .string()
          .max(500)
          .optional()
          .describe('What the server runs, e.g. "PostgreSQL OLTP", "build agent", "file server".'),
      },
    },
    ({ workload }) => ({
      description: 'Check the power plan of this server',
      messages: [{ role: 'user', content: { type: 'text', text: checkServerPowerText(ops, workload) } }],
    }),
  );

  return server;
};

/** The steps of the check, naming only the tools this server offers. */
const checkServerPowerText = (ops: readonly Operation[], workload: string | undefined): string => {
  const has = (name: string) => ops.some((o) => o.name === name);
  const steps = [
    'Call get_system_info and get_active_power_plan (both read-only) and tell me the OS, whether this is a ' +
      'virtual machine (then the hypervisor host mostly decides CPU power policy), the active plan, its ' +
      'processor settings, who owns the setting and whether it can be changed here.',
    ...(has('run_cpu_benchmark')
      ? [
          'If a measurement would help, first look at list_benchmarks for a recent result. Run ' +
            'run_cpu_benchmark only after I agree: it loads every CPU for a few seconds.',
        ]
      : []),
    has('get_recommendation')
      ? 'Call get_recommendation with the workload class closest to what the server runs (its `workload` ' +
        'argument lists them) and explain it in plain words: what it suggests, what each reason rests on, ' +
        'the confidence, and the trade-off in power and heat.'
      : 'Say whether the active plan suits the workload and why, with the trade-off in power and heat.',
    ...(has('compare_power_plans')
      ? [
          'If I want the plans measured against each other, offer compare_power_plans: it switches the plan ' +
            'for a while and loads every CPU, so call it with dryRun: true first and run it only after I agree.',
        ]
      : []),
    'Do not change anything unless I explicitly ask for it. When I do, call set_power_plan with dryRun: true ' +
      'first, show me what would change, and only then call it again without dryRun.',
  ];
  return [
    `Check whether this server's power plan suits its workload${workload ? `: ${workload}` : ''}.`,
    '',
    ...steps.map((s, i) => `${i + 1}. ${s}`),
  ].join('\n');
};
