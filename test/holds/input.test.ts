/**
 * The hold operations at the edges: duration parsing and bounds, one schema for REST and CLI
 * (`for` or `durationSeconds`), control characters, scopes, and the REST bindings and statuses.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  HoldList,
  HoldResult,
  MAX_HOLD_SECONDS,
  parseDuration,
  ReleaseResult,
} from '../../src/domain/holds.ts';
import type { Caller } from '../../src/domain/scopes.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { call } from '../support/call.ts';
import { isCode } from '../support/errors.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { appOver } from '../support/server.ts';

const reader: Caller = { name: 'dashboard', scopes: ['read'] };

describe('parseDuration', () => {
  it('reads s, m, h, d and combinations, largest unit first', () => {
    assert.equal(parseDuration('90s'), 90);
    assert.equal(parseDuration('45m'), 2700);
    assert.equal(parseDuration('2h'), 7200);
    assert.equal(parseDuration('1d'), 86_400);
    assert.equal(parseDuration('1h30m'), 5400);
    assert.equal(parseDuration(' 2H '), 7200);
  });
  it('rejects what is not a duration', () => {
    for (const bad of ['', '90', 'h', '2x', '30m1h', '1.5h', '-1h', '2 h', '1h1h']) {
      assert.equal(parseDuration(bad), undefined, bad);
    }
  });
});

describe('hold input', () => {
  const t = depsPerBlock();

  const refused = async (input: Record<string, unknown>, message: RegExp) => {
    await assert.rejects(call(t.deps, 'hold_power_plan', input), isCode('invalid_input', message));
    assert.equal((await t.deps.backend.getActive()).plan?.id, SCHEME.balanced, 'nothing changed');
  };

  it('needs exactly one of for and durationSeconds, within 1 s .. 7 days', async () => {
    await refused({ plan: 'high-performance' }, /exactly one/);
    await refused({ plan: 'high-performance', for: '1h', durationSeconds: 60 }, /exactly one/);
    await refused({ plan: 'high-performance', durationSeconds: 0 }, /durationSeconds/);
    await refused({ plan: 'high-performance', durationSeconds: MAX_HOLD_SECONDS + 1 }, /durationSeconds/);
    await refused({ plan: 'high-performance', durationSeconds: 1.5 }, /durationSeconds/);
    await refused({ plan: 'high-performance', for: '8d' }, /for: must be a duration/);
    await refused({ plan: 'high-performance', for: '0s' }, /for: must be a duration/);
    await refused({ plan: 'high-performance', for: 'soon' }, /for: must be a duration/);
  });

  it('refuses control characters in the reason and unknown fields', async () => {
    await refused({ plan: 'high-performance', for: '1h', reason: 'a\nb' }, /reason/);
    await refused({ plan: 'high-performance', for: '1h', reason: 'x'.repeat(201) }, /reason/);
    await refused({ plan: 'high-performance', for: '1h', force: true }, /unknown field/);
  });

  it('answers not_found for an unknown plan and journals nothing', async () => {
    await assert.rejects(call(t.deps, 'hold_power_plan', { plan: 'turbo', for: '1h' }), isCode('not_found'));
    assert.equal(await t.deps.planChange.journal(), undefined);
    assert.equal(existsSync(t.deps.store.path('restore-journal.json')), false);
  });

  it('lets a read-only caller list holds but not take or release one', async () => {
    await assert.rejects(
      call(t.deps, 'hold_power_plan', { plan: 'high-performance', for: '1h' }, reader),
      isCode('forbidden', /control/),
    );
    const h = HoldResult.parse(
      await call(t.deps, 'hold_power_plan', { plan: 'high-performance', for: '1h' }),
    );
    assert.equal(HoldList.parse(await call(t.deps, 'list_holds', {}, reader)).holds.length, 1);
    await assert.rejects(call(t.deps, 'release_power_plan', { id: h.hold.id }, reader), isCode('forbidden'));
    await call(t.deps, 'release_power_plan', { id: h.hold.id });
  });
});

describe('holds over REST', () => {
  const t = depsPerBlock();
  const app = appOver(t);

  const json = (method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('POST /v1/holds (201), GET /v1/holds, PUT /v1/plans/active (409), DELETE /v1/holds/{id}', async () => {
    const created = await json('POST', '/v1/holds', {
      plan: 'high-performance',
      durationSeconds: 600,
      reason: 'reindex',
    });
    assert.equal(created.status, 201);
    const h = HoldResult.parse(await created.json());
    assert.equal(h.after.id, SCHEME.highPerformance);

    const list = HoldList.parse(await (await app.request('/v1/holds')).json());
    assert.deepEqual(
      list.holds.map((x) => [x.id, x.reason]),
      [[h.hold.id, 'reindex']],
    );

    const set = await json('PUT', '/v1/plans/active', { plan: 'balanced' });
    assert.equal(set.status, 409);
    const problem = (await set.json()) as { code: string; details: { holds: { id: string }[] } };
    assert.equal(problem.code, 'conflict');
    assert.equal(problem.details.holds[0]!.id, h.hold.id);

    const bad = await json('DELETE', '/v1/holds/not-a-uuid');
    assert.equal(bad.status, 400);

    const released = await json('DELETE', `/v1/holds/${h.hold.id}`);
    assert.equal(released.status, 200);
    const r = ReleaseResult.parse(await released.json());
    assert.equal(r.restoredPlan?.id, SCHEME.balanced);
    assert.equal((await json('DELETE', `/v1/holds/${h.hold.id}`)).status, 404);
  });
});
