/**
 * Every refused attempt to change a plan is one audit record (caller, input, why), whichever
 * surface it came by and whatever refused it: an unknown plan, a missing scope, a hold conflict,
 * the plan lock busy, invalid input. A dry run is an answer, not an attempt: no record. A flood of
 * refusals leaves a bounded number of records and one summary of the rest.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AuditRecord } from '../../src/domain/audit.ts';
import { PowerPlanError } from '../../src/domain/errors.ts';
import { createLogger } from '../../src/lib/log.ts';
import { Store } from '../../src/lib/store.ts';
import { AuditTrail } from '../../src/services/audit-trail.ts';
import { call } from '../support/call.ts';
import type { TestDeps } from '../support/deps.ts';
import { depsPerBlock, perBlock } from '../support/fixture.ts';
import { withMcpClient } from '../support/mcp.ts';
import { runCli } from '../support/processes.ts';
import { callError } from '../surfaces/mcp-checks.ts';
import { bearer, secureHarness } from './harness.ts';

type Rec = AuditRecord & { code?: string };

/** The records written from `from` on, each one of the audit trail's shape. */
const since = async (t: TestDeps, from: number): Promise<Rec[]> =>
  ((await t.deps.store.readLines('audit.jsonl')) as unknown[]).slice(from).map((r) => {
    AuditRecord.parse(r);
    return r as Rec;
  });
const count = async (t: TestDeps) => (await t.deps.store.readLines('audit.jsonl')).length;

/** Runs `attempt` and returns the one record it left, checking it is a refusal of `operation`. */
const oneRefusal = async (t: TestDeps, operation: string, attempt: () => Promise<unknown>): Promise<Rec> => {
  const from = await count(t);
  await attempt();
  const records = await since(t, from);
  assert.equal(records.length, 1, JSON.stringify(records));
  const [r] = records;
  assert.equal(r!.operation, operation);
  assert.equal(r!.result, 'refused');
  assert.ok(r!.error && r!.error.length > 0, 'says why');
  return r!;
};

/** Holds the plan lock (as another change in progress would) while `fn` runs. */
const whileLocked = async <T>(t: TestDeps, fn: () => Promise<T>): Promise<T> => {
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  let locked!: () => void;
  const taken = new Promise<void>((r) => {
    locked = r;
  });
  const holder = t.deps.planChange.lock.run('a comparison in progress', async () => {
    locked();
    await held;
  });
  await taken;
  try {
    return await fn();
  } finally {
    release();
    await holder;
  }
};

describe('REST: each refused plan change is one audit record', () => {
  const h = perBlock(
    () => secureHarness(),
    (x) => x.cleanup(),
  );
  const send = (method: string, path: string, token: string, body?: unknown, raw?: string) =>
    h.app.request(`http://127.0.0.1${path}`, {
      method,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      ...(body !== undefined || raw !== undefined ? { body: raw ?? JSON.stringify(body) } : {}),
    });
  /** A request answered `status`, and the one refusal record of `operation` it left. */
  const refused = (operation: string, status: number, ...request: Parameters<typeof send>) =>
    oneRefusal(h.t, operation, async () => {
      const res = await send(...request);
      assert.equal(res.status, status, await res.text());
    });

  it('an unknown plan (404): the caller, the input and why', async () => {
    const r = await refused('set_power_plan', 404, 'PUT', '/v1/plans/active', h.tokens.control, {
      plan: 'no-such-plan',
    });
    assert.equal(r.caller, 'control-token');
    assert.equal(r.code, 'not_found');
    assert.equal((r.input as { plan: string }).plan, 'no-such-plan');
    assert.match(r.error!, /no-such-plan/);
  });

  it('a read-only token (403)', async () => {
    const r = await refused('set_power_plan', 403, 'PUT', '/v1/plans/active', h.tokens.read, {
      plan: 'high-performance',
    });
    assert.equal(r.caller, 'read-token');
    assert.equal(r.code, 'forbidden');
    assert.deepEqual(r.input, { plan: 'high-performance' });
  });

  it('invalid input (400): a wrong field, and a body that is no JSON', async () => {
    const r = await refused('hold_power_plan', 400, 'POST', '/v1/holds', h.tokens.control, {
      plan: 'high-performance',
      for: '9 years',
    });
    assert.equal(r.code, 'invalid_input');
    assert.equal((r.input as { for: string }).for, '9 years');
    const j = await refused(
      'set_power_plan',
      400,
      'PUT',
      '/v1/plans/active',
      h.tokens.control,
      undefined,
      '{"plan":',
    );
    assert.equal(j.code, 'invalid_input');
  });

  it('a hold conflict (409), and no record for the same refusal as a dry run', async () => {
    const held = await send('POST', '/v1/holds', h.tokens.control, { plan: 'high-performance', for: '1h' });
    assert.equal(held.status, 201);
    const r = await refused('hold_power_plan', 409, 'POST', '/v1/holds', h.tokens.control, {
      plan: 'power-saver',
      for: '1h',
    });
    assert.equal(r.code, 'conflict');
    assert.equal((r.input as { plan: string }).plan, 'power-saver');
    const s = await refused('set_power_plan', 409, 'PUT', '/v1/plans/active', h.tokens.control, {
      plan: 'power-saver',
    });
    assert.match(s.error!, /held/);
    const from = await count(h.t);
    const dry = await send('PUT', '/v1/plans/active', h.tokens.control, {
      plan: 'power-saver',
      dryRun: true,
    });
    assert.equal(dry.status, 409);
    assert.deepEqual(await since(h.t, from), [], 'a dry run leaves no record');
  });

  it('the plan lock busy (409)', async () => {
    const r = await oneRefusal(h.t, 'hold_power_plan', () =>
      whileLocked(h.t, async () => {
        const res = await send('POST', '/v1/holds', h.tokens.control, {
          plan: 'high-performance',
          for: '1h',
        });
        assert.equal(res.status, 409);
      }),
    );
    assert.match(r.error!, /in use by a comparison in progress/);
  });

  it('/metrics counts the refused attempts', async () => {
    const res = await h.app.request('http://127.0.0.1/metrics', { headers: bearer(h.tokens.read) });
    const n = Number(/^powerplan_plan_changes_refused_total (\d+)$/m.exec(await res.text())?.[1]);
    const refused = (await since(h.t, 0)).filter((r) => r.result === 'refused').length;
    assert.ok(refused >= 6, `${refused} refusals recorded`);
    assert.equal(n, refused);
  });

  it('hostile input is kept printable and bounded', async () => {
    const r = await refused('set_power_plan', 400, 'PUT', '/v1/plans/active', h.tokens.control, {
      plan: `x\u001b]0;owned\u0007\u202e${'A'.repeat(20_000)}`,
      ...Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, i])),
    });
    const json = JSON.stringify(r);
    assert.ok(json.length < 4096, `${json.length} characters`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
    assert.doesNotMatch(json.replace(/\\u00[0-9a-f]{2}/g, ''), /[\u0000-\u001f\u007f\u202e]/);
    assert.doesNotMatch(JSON.stringify(r.input), /\\u001b|\\u0007/);
    // A token pasted into a field is refused as a plan, and recorded as no token.
    const pasted = await refused('set_power_plan', 404, 'PUT', '/v1/plans/active', h.tokens.control, {
      plan: h.tokens.control,
    });
    assert.ok(!JSON.stringify(pasted).includes(h.tokens.control.slice(3, 20)), JSON.stringify(pasted));
  });
});

describe('MCP: refused tool calls are audited like REST', () => {
  const t = depsPerBlock();

  it('unknown plan, read-only caller, invalid input, hold conflict, lock busy', () =>
    withMcpClient(
      t.deps,
      (admin) =>
        withMcpClient(
          t.deps,
          async (reader) => {
            const cases: [Client, string, Record<string, unknown>, string][] = [
              [admin, 'set_power_plan', { plan: 'no-such-plan' }, 'not_found'],
              [reader, 'set_power_plan', { plan: 'high-performance' }, 'forbidden'],
              [admin, 'hold_power_plan', { plan: 'high-performance', for: 'soon' }, 'invalid_input'],
            ];
            for (const [client, name, args, code] of cases) {
              const r = await oneRefusal(t, name, () => callError(client, name, args));
              assert.equal(r.code, code, JSON.stringify(r));
              assert.equal(r.caller, client === reader ? 'mcp-reader' : 'mcp-admin');
            }
            await call(t.deps, 'hold_power_plan', { plan: 'high-performance', for: '1h' });
            const c = await oneRefusal(t, 'hold_power_plan', () =>
              callError(admin, 'hold_power_plan', { plan: 'power-saver', for: '1h' }),
            );
            assert.equal(c.code, 'conflict');
            const l = await oneRefusal(t, 'set_power_plan', () =>
              whileLocked(t, () => callError(admin, 'set_power_plan', { plan: 'high-performance' })),
            );
            assert.equal(l.code, 'conflict');
          },
          { name: 'mcp-reader', scopes: ['read'] },
        ),
      { name: 'mcp-admin', scopes: ['control'] },
    ));
});

describe('CLI: refused commands are audited (as the local caller)', () => {
  const t = depsPerBlock();
  const cli = async (...args: string[]) => {
    const r = await runCli(args, t.env);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r;
  };

  it('unknown plan, invalid input, hold conflict, lock busy', async () => {
    const unknown = await oneRefusal(t, 'set_power_plan', () => cli('set', 'no-such-plan'));
    assert.equal(unknown.caller, 'local');
    assert.equal(unknown.code, 'not_found');
    const invalid = await oneRefusal(t, 'hold_power_plan', () =>
      cli('hold', 'high-performance', '--for', '9y'),
    );
    assert.equal(invalid.code, 'invalid_input');
    await call(t.deps, 'hold_power_plan', { plan: 'high-performance', for: '1h' });
    const conflict = await oneRefusal(t, 'hold_power_plan', () => cli('hold', 'power-saver', '--for', '1h'));
    assert.equal(conflict.code, 'conflict');
    const busy = await oneRefusal(t, 'release_power_plan', () =>
      whileLocked(t, () => cli('release', '00000000-0000-4000-8000-000000000000')),
    );
    assert.match(busy.error!, /being changed by a comparison in progress/);
  });
});

describe('a flood of refusals is capped', () => {
  const t = depsPerBlock({ POWERPLAN_AUDIT_REFUSALS: '20' });

  it('1000 refused attempts leave 20 records and one summary of the other 980', async () => {
    const from = await count(t);
    const reader = { name: 'flooder', scopes: ['read' as const] };
    const attempts = Array.from({ length: 1000 }, (_, i) =>
      call(t.deps, 'set_power_plan', { plan: `p${i}` }, reader).then(
        () => assert.fail('refused'),
        () => undefined,
      ),
    );
    await Promise.all(attempts);
    await t.deps.planChange.flushRefusals();
    const records = await since(t, from);
    assert.equal(records.filter((r) => r.result === 'refused').length, 20);
    const summaries = records.filter((r) => r.result === 'suppressed');
    assert.equal(summaries.length, 1);
    assert.equal(records.length, 21);
    assert.deepEqual((summaries[0]!.input as { operations: object }).operations, { set_power_plan: 980 });
    assert.match(summaries[0]!.error!, /^980 more refusals suppressed/);
    assert.deepEqual(t.deps.planChange.refusals, { refused: 1000, suppressed: 980 });
  });
});

describe('the summary of a minute is written when the minute ends', () => {
  const dir = perBlock(
    async () => ({ path: await mkdtemp(join(tmpdir(), 'powerplan-refusals-')) }),
    (d) => rm(d.path, { recursive: true, force: true }),
  );
  let trail: AuditTrail;
  let lines: () => Promise<Rec[]>;
  before(() => {
    const log = createLogger('silent');
    const store = new Store(dir.path, { log });
    // Long enough that ten refusals fit in one window on a loaded machine; the test then waits for
    // the summary line itself, not for a time.
    trail = new AuditTrail({ store, log, refusalsPerMinute: 3, windowMs: 1500 });
    lines = async () => (await store.readLines('audit.jsonl')) as Rec[];
  });
  after(() => trail.flush());

  it('without a later refusal or a stop, and the next minute records again', async () => {
    const who = { name: 'x', scopes: [] };
    for (let i = 0; i < 10; i++)
      await trail.refused(who, 'set_power_plan', { i }, new PowerPlanError('not_found', 'no'));
    assert.equal((await lines()).length, 3);
    let after1 = await lines();
    for (const until = Date.now() + 20_000; after1.length < 4 && Date.now() < until; after1 = await lines())
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      after1.map((r) => r.result),
      ['refused', 'refused', 'refused', 'suppressed'],
    );
    await trail.refused(who, 'set_power_plan', { i: 10 }, new PowerPlanError('conflict', 'held'));
    assert.equal((await lines()).at(-1)!.result, 'refused');
    // Not a refusal: a failure of the system, or an error recorded already.
    await trail.refused(who, 'set_power_plan', {}, new PowerPlanError('os_error', 'powercfg failed'));
    const seen = new PowerPlanError('conflict', 'seen');
    trail.recordedAlready(seen);
    await trail.refused(who, 'set_power_plan', {}, seen);
    assert.equal((await lines()).length, 5);
  });
});

describe('refusals never rotate change records out', () => {
  // Small files and many refusals a minute: before, an administrator's change was rotated out of
  // the files and of /v1/audit by the refusals of a tokenless user within the hour.
  const t = depsPerBlock({
    POWERPLAN_AUDIT_MAX_BYTES: '4096',
    POWERPLAN_AUDIT_FILES: '2',
    POWERPLAN_AUDIT_REFUSALS: '10000',
  });

  it('attack, refusal flood: 300 refusals after a change; the change stays in audit.jsonl and in get_audit_log with the newest refusals', async () => {
    const done = await call<{ changed: boolean }>(t.deps, 'set_power_plan', { plan: 'high-performance' });
    assert.equal(done.changed, true);
    const reader = { name: 'flooder', scopes: ['read' as const] };
    for (let i = 0; i < 300; i++)
      await call(t.deps, 'set_power_plan', { plan: `p${i}` }, reader).then(
        () => assert.fail('refused'),
        () => undefined,
      );
    // The refusals filled and rotated their own files: far more than two files' worth were written.
    const refusals = (await t.deps.store.refusals.all()) as Rec[];
    assert.ok(refusals.length < 300 && refusals.length > 10, String(refusals.length));
    assert.ok(refusals.every((r) => r.result === 'refused'));
    const changes = (await t.deps.store.audit.all()) as Rec[];
    assert.deepEqual(
      changes.map((r) => [r.operation, r.result]),
      [['set_power_plan', 'changed']],
    );
    // get_audit_log shows both, merged by time: the change first, then the newest refusals.
    const log = await call<{ records: Rec[]; truncated: boolean }>(t.deps, 'get_audit_log', { limit: 1000 });
    assert.equal(log.records[0]!.result, 'changed');
    assert.equal(log.records.length, refusals.length + 1);
    assert.equal(log.records.at(-1)!.input && (log.records.at(-1)!.input as { plan: string }).plan, 'p299');
    const times = log.records.map((r) => Date.parse(r.time));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    const newest = await call<{ records: Rec[]; truncated: boolean }>(t.deps, 'get_audit_log', { limit: 5 });
    assert.equal(newest.truncated, true);
    assert.deepEqual(
      newest.records.map((r) => (r.input as { plan: string }).plan),
      ['p295', 'p296', 'p297', 'p298', 'p299'],
    );
  });
});
