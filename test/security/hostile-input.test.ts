/**
 * Property-based hostile input: thousands of random and mutated requests at every route. Shows no
 * 5xx, that the active plan changes only when a valid request says it changed it, one audit line
 * per change, and (on the Windows backend over the powercfg emulator) that only expected argument
 * shapes ever reach powercfg or reg.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Scope } from '../../src/domain/scopes.ts';
import type { Operation } from '../../src/operations/define.ts';
import { operations } from '../../src/operations/index.ts';
import { type Emulated, emulate } from '../platform/windows/emulator.ts';
import { perBlock } from '../support/fixture.ts';
import { bearer, type SecureHarness, secureHarness, strangerToken, stubHandlers } from './harness.ts';

// Handlers that could legitimately change the machine beyond set_power_plan (holds, benchmarks,
// desired state) are stubbed: their validation still runs, their effect does not.
stubHandlers(operations.filter((op) => !op.annotations.readOnly && op.name !== 'set_power_plan'));

const shellAndPath = [
  '; rm -rf /',
  '$(reboot)',
  '`id`',
  '| powercfg /setactive SCHEME_MIN',
  '& del C:\\Windows',
  '../../../etc/passwd',
  '..\\..\\Windows\\System32',
  '%2e%2e%2f',
  '\u0000',
  '\r\nX-Injected: 1',
  '-h',
  '/setactive',
  '/deletescheme 381b4222-f694-41f0-9685-ff5bb260df2e',
  '{381b4222-f694-41f0-9685-ff5bb260df2e}',
  'SCHEME_MIN',
  'SCHEME_CURRENT',
  'high-performance',
  'ultimate-performance',
  'balanced',
  'Power saver',
  '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c',
  'Ünïcødé 计划 🚀',
  '\u202e\u0301',
  'null',
  'true',
  '-1',
  '1e309',
];

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...shellAndPath) },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.nat({ max: 70_000 }).map((n) => 'A'.repeat(n)) },
);

const fieldNames = [
  ...new Set(operations.flatMap((op) => Object.keys(op.input.shape))),
  '__proto__',
  'constructor',
  'plan ',
  'PLAN',
];

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileString, { maxLength: 4 }),
  fc.dictionary(fc.constantFrom(...fieldNames), hostileString, { maxKeys: 3 }),
);

const routePaths = [...new Set(operations.map((op) => op.http.path))];
const pathSegment = fc.oneof(hostileString, fc.constantFrom('..', '.', '%2e%2e', '%2F', '', '%00', '~'));

const path = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...routePaths.filter((p) => !p.includes('{'))) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...routePaths.filter((p) => p.includes('{'))), pathSegment)
      .map(([p, seg]) => p.replace(/\{\w+\}/, encodeURIComponent(seg))),
  },
  { weight: 1, arbitrary: fc.constantFrom('/healthz', '/openapi.json', '/mcp', '/metrics', '/docs') },
  {
    weight: 2,
    arbitrary: fc
      .array(pathSegment, { minLength: 1, maxLength: 4 })
      .map((segs) => `/v1/${segs.map((s) => (/^[.%~]/.test(s) ? s : encodeURIComponent(s))).join('/')}`),
  },
);

const query = fc
  .array(fc.tuple(fc.constantFrom(...fieldNames, 'x'), fc.oneof(hostileString, fc.constant(''))), {
    maxLength: 4,
  })
  .map((pairs) => (pairs.length ? `?${new URLSearchParams(pairs).toString()}` : ''));

/** A plausible body taken apart: known fields with hostile values, broken JSON, wrong top-level types. */
const body = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .dictionary(fc.constantFrom(...fieldNames), hostileValue, { maxKeys: 4 })
      .map((o) => JSON.stringify(o)),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(hostileString, fc.boolean())
      .map(([plan, dryRun]) => JSON.stringify({ plan, dryRun })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(hostileString, hostileString)
      .map(([a, b]) => `{"plan":${JSON.stringify(a)},"plan":${JSON.stringify(b)}}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{',
      '{"plan":',
      '[]',
      'null',
      '42',
      '"x"',
      '{"plan":"balanced"}}',
      '\uFEFF{}',
      '{"a":1,}',
    ),
  },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  '',
  'garbage/../..',
);

type Cred = Scope | 'none' | 'bad';
const request = fc.record({
  method: fc.constantFrom('GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'),
  path,
  query,
  body,
  contentType,
  cred: fc.constantFrom<Cred>('control', 'control', 'control', 'read', 'benchmark', 'none', 'bad'),
});
type Req = typeof request extends fc.Arbitrary<infer R> ? R : never;

const send = async (h: SecureHarness, r: Req): Promise<Response> => {
  const token = r.cred === 'none' ? undefined : r.cred === 'bad' ? strangerToken : h.tokens[r.cred];
  const headers: Record<string, string> = { host: 'localhost', ...bearer(token) };
  if (r.contentType) headers['content-type'] = r.contentType;
  const withBody = r.method !== 'GET' && r.method !== 'HEAD' && r.body !== undefined;
  return h.app.request(`http://localhost${r.path}${r.query}`, {
    method: r.method,
    headers,
    ...(withBody ? { body: r.body } : {}),
  });
};

/** set_power_plan with a hostile or valid plan, so that real changes are in the mix. */
const planRequests = fc.record({
  method: fc.constant('PUT'),
  path: fc.constant('/v1/plans/active'),
  query: fc.constant(''),
  body: fc
    .tuple(hostileString, fc.boolean(), fc.boolean())
    .map(([plan, dryRun, create]) => JSON.stringify({ plan, dryRun, create })),
  contentType: fc.constant('application/json'),
  cred: fc.constant<Cred>('control'),
});
const mix = fc.oneof({ weight: 1, arbitrary: planRequests }, { weight: 4, arbitrary: request });

const activeId = async (h: SecureHarness) => (await h.t.deps.backend.getActive()).plan?.id;

/** Runs the property: no 5xx; the plan moves only when a 200 answer says it did. Returns the changes. */
const fuzz = async (h: SecureHarness, numRuns: number, arb: fc.Arbitrary<Req> = request): Promise<number> => {
  let changes = 0;
  let expected = await activeId(h);
  await fc.assert(
    fc.asyncProperty(arb, async (r) => {
      const res = await send(h, r);
      const text = await res.text();
      assert.ok(res.status < 500, `${res.status} for ${r.method} ${r.path}${r.query}: ${text.slice(0, 300)}`);
      const now = await activeId(h);
      if (now !== expected) {
        assert.equal(res.status, 200, `plan moved on a ${res.status}`);
        const answer = JSON.parse(text) as { changed: boolean; dryRun: boolean; after: { id: string } };
        assert.equal(answer.changed && !answer.dryRun, true, 'plan moved but the answer says it did not');
        assert.equal(answer.after.id, now);
        assert.ok(r.cred === 'control', 'only a control token changes the plan');
        changes++;
        expected = now;
      }
    }),
    { numRuns, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
  );
  return changes;
};

const changedLines = async (h: SecureHarness) =>
  (await h.t.deps.store.readLines('audit.jsonl')).filter(
    (l) => (l as { result?: string }).result === 'changed',
  ).length;

describe('hostile input on the simulated backend', () => {
  const h = perBlock(
    () => secureHarness(),
    (x) => x.cleanup(),
  );

  it('thousands of random and mutated requests: no 5xx, plan changes only by valid requests, each audited', async () => {
    const changes = await fuzz(h, 2000, mix);
    assert.equal(await changedLines(h), changes, 'one audit line per real change');
    assert.ok(changes > 0, 'the mix includes valid changes, so the tracking is exercised');
  });

  it('every operation rejects unknown fields before running', () => {
    for (const op of operations as Operation[]) {
      assert.equal(op.input.safeParse({ 'x;rm -rf /': 1 }).success, false, op.name);
    }
  });
});

describe('hostile input on the Windows backend over the powercfg emulator', () => {
  let h: SecureHarness;
  let emu: Emulated;
  before(async () => {
    emu = await emulate();
    h = await secureHarness({}, { backend: emu.backend });
  });
  after(async () => {
    await h.cleanup();
    await emu.cleanup();
  });

  it('only expected argument shapes reach powercfg and reg', async () => {
    const changes = await fuzz(h, 150, mix);
    assert.equal(await changedLines(h), changes);

    const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const calls = await emu.argv();
    assert.ok(calls.length > 0, 'the emulator was called');
    for (const { tool, argv } of calls) {
      const shown = JSON.stringify(argv);
      if (tool === 'powercfg') {
        assert.match(argv[0] ?? '', /^\/[a-z]+$/, shown);
        for (const a of argv.slice(1)) assert.ok(guid.test(a) || /^[A-Z][A-Z0-9_]*$/.test(a), shown);
      } else if (tool === 'wevtutil') {
        // The event query is fixed text: only the count may vary, and no caller string is in it.
        assert.deepEqual(argv.slice(0, 2), ['qe', 'System'], shown);
        assert.match(
          argv[2] ?? '',
          /^\/q:\*\[System\[Provider\[@Name='Microsoft-Windows-Kernel-Processor-Power'\][ A-Za-z0-9=()]*\]\]$/,
          shown,
        );
        assert.deepEqual(
          argv.slice(3).map((a) => a.replace(/^\/c:\d+$/, '/c:N')),
          ['/c:N', '/rd:true', '/f:xml'],
          shown,
        );
      } else {
        assert.equal(argv[0], 'query', shown);
        assert.match(argv[1] ?? '', /^HKLM\\[A-Za-z0-9\\ _.-]+$/, shown);
        for (const a of argv.slice(2)) assert.match(a, /^(\/[a-z]+|[A-Za-z][A-Za-z0-9_]*)$/, shown);
      }
    }
  });
});
