/**
 * Security test harness: the REST app with the production security middleware over the simulated
 * backend, a token file holding one token per scope, and the service log captured in memory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { Deps } from '../../src/deps.ts';
import { PowerPlanError } from '../../src/domain/errors.ts';
import type { Scope } from '../../src/domain/scopes.ts';
import { createLogger } from '../../src/lib/log.ts';
import { createToken } from '../../src/lib/tokens.ts';
import type { Operation } from '../../src/operations/define.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { loadHttpSecurity } from '../../src/surfaces/http/security.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';

export interface SecureHarness {
  t: TestDeps;
  app: ReturnType<typeof createApp>;
  tokenFile: string;
  /** One token per scope, named after it. */
  tokens: Record<Scope, string>;
  /** Every line the service logged (level debug). */
  logLines: string[];
  cleanup: () => Promise<void>;
}

export const secureHarness = async (
  extraEnv: Record<string, string> = {},
  overrides: Partial<Deps> = {},
): Promise<SecureHarness> => {
  const tokDir = await mkdtemp(join(tmpdir(), 'powerplan-tokens-'));
  const tokenFile = join(tokDir, 'tokens.json');
  const tokens = {} as Record<Scope, string>;
  for (const scope of ['read', 'benchmark', 'control'] as const) {
    tokens[scope] = (await createToken(tokenFile, `${scope}-token`, [scope])).token;
  }
  const logLines: string[] = [];
  const log = createLogger('debug', (l) => logLines.push(l));
  const t = await testDeps({ POWERPLAN_TOKEN_FILE: tokenFile, ...extraEnv }, { log, ...overrides });
  const sec = await loadHttpSecurity(t.deps.config, log);
  const app = createApp(t.deps, sec);
  return {
    t,
    app,
    tokenFile,
    tokens,
    logLines,
    cleanup: async () => {
      await t.cleanup();
      await rm(tokDir, { recursive: true, force: true });
    },
  };
};

export const bearer = (token: string | undefined): Record<string, string> =>
  token === undefined ? {} : { authorization: `Bearer ${token}` };

/** A well-formed token that is in no token file. */
export const strangerToken = `pp_${'A'.repeat(43)}`;

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
  minLength?: number;
  minItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
};

const sampleOf = (s: JsonSchema): unknown => {
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[0];
  if (s.anyOf?.length) return sampleOf(s.anyOf[0]!);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      if (s.format === 'date-time') return new Date(0).toISOString();
      return 'balanced'.padEnd(s.minLength ?? 0, 'x');
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sampleOf(s.items ?? {}));
    case 'object':
      return Object.fromEntries((s.required ?? []).map((k) => [k, sampleOf(s.properties?.[k] ?? {})]));
    default:
      return 'x';
  }
};

/** Values a schema alone cannot suggest (patterns, cross-field rules), per operation. */
const sampleOverrides: Record<string, Record<string, unknown>> = {
  hold_power_plan: { durationSeconds: 60 },
  release_power_plan: { id: '00000000-0000-4000-8000-000000000000' },
  get_benchmark: { id: 'bm-20250101-000000-abcdef' },
};

/** A small valid input for an operation (required fields only), checked against its schema. */
export const validSample = (op: Operation): Record<string, unknown> => {
  const sample = {
    ...(sampleOf(z.toJSONSchema(op.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema) as object),
    ...sampleOverrides[op.name],
  };
  const parsed = op.input.safeParse(sample);
  if (!parsed.success) throw new Error(`no valid sample input for ${op.name}: ${parsed.error.message}`);
  return sample as Record<string, unknown>;
};

/** Replaces every handler with one that answers `busy`, so reaching it shows auth and validation passed. */
export const stubHandlers = (ops: readonly Operation[]): void => {
  for (const op of ops) {
    op.handler = async () => {
      throw new PowerPlanError('busy', `stub: ${op.name} reached its handler`);
    };
  }
};

/** Builds the HTTP request for an operation and an input, the way a REST client would. */
export const restRequest = (
  op: Operation,
  input: Record<string, unknown>,
  headers: Record<string, string>,
): [string, RequestInit] => {
  const rest = { ...input };
  const path = op.http.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = rest[name];
    delete rest[name];
    return encodeURIComponent(String(v ?? 'x'));
  });
  if (op.http.method === 'GET' || op.http.method === 'DELETE') {
    const query = new URLSearchParams(
      Object.entries(rest).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)]),
    ).toString();
    return [`${path}${query ? `?${query}` : ''}`, { method: op.http.method, headers }];
  }
  return [
    path,
    {
      method: op.http.method,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(rest),
    },
  ];
};
