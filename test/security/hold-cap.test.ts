/**
 * Live holds are capped (POWERPLAN_MAX_HOLDS, 100 by default) and a refusal names a few holds,
 * not all: 3,000 hold attempts leave 100 holds in force, every other attempt is refused with 409,
 * and no answer carries more than a few KB (before the cap, 3,000 were accepted and every 409 then
 * listed them all, 1.6 MB).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LISTED_HOLDS } from '../../src/domain/holds.ts';
import { perBlock } from '../support/fixture.ts';
import { bearer, secureHarness } from './harness.ts';

interface Problem {
  status: number;
  code: string;
  detail: string;
  details?: { holds?: unknown[]; holdsInForce?: number; maxHolds?: number };
}

describe('live holds are capped', () => {
  const h = perBlock(
    () => secureHarness({ POWERPLAN_AUDIT_REFUSALS: '10' }),
    (x) => x.cleanup(),
  );
  const post = (path: string, method: string, body: unknown) =>
    h.app.request(`http://127.0.0.1${path}`, {
      method,
      headers: { ...bearer(h.tokens.control), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const reason = 'nightly restore '.repeat(12).slice(0, 190);

  it('3,000 hold attempts: 100 in force, 2,900 refused with 409, each answer a few KB at most', async () => {
    let accepted = 0;
    let largest = 0;
    const refused: Problem[] = [];
    for (let i = 0; i < 3000; i++) {
      const res = await post('/v1/holds', 'POST', { plan: 'high-performance', for: '2h', reason });
      const text = await res.text();
      largest = Math.max(largest, text.length);
      if (res.status === 201) accepted++;
      else {
        assert.equal(res.status, 409, text);
        if (refused.length < 3) refused.push(JSON.parse(text) as Problem);
      }
    }
    assert.equal(accepted, 100);
    assert.ok(largest < 4096, `largest answer ${largest} bytes`);
    const [first] = refused;
    assert.equal(first!.code, 'conflict');
    assert.match(
      first!.detail,
      /100 holds are in force, the most this service keeps \(POWERPLAN_MAX_HOLDS=100\)/,
    );
    assert.equal(first!.details?.maxHolds, 100);
    const list = await h.app.request('http://127.0.0.1/v1/holds', { headers: bearer(h.tokens.read) });
    assert.equal(((await list.json()) as { holds: unknown[] }).holds.length, 100);
    // The refusals were audited, within the cap: 10 records a minute and a summary of the rest
    // (on a slow machine the 3,000 requests may span more than one minute).
    await h.t.deps.planChange.flushRefusals();
    const records = (await h.t.deps.store.readLines('audit.jsonl')) as {
      result: string;
      input: { count?: number };
    }[];
    const written = records.filter((r) => r.result === 'refused').length;
    const summed = records.filter((r) => r.result === 'suppressed').map((r) => r.input.count ?? 0);
    assert.ok(summed.length >= 1, 'a summary of the refusals left out');
    assert.ok(
      written >= 10 && written <= 10 * (summed.length + 1),
      `${written} refusals written, ${summed.length} minutes`,
    );
    assert.equal(written + summed.reduce((a, b) => a + b, 0), 2900);
  });

  it('a 409 that names the holds in force lists a few and counts the rest', async () => {
    const res = await post('/v1/holds', 'POST', { plan: 'power-saver', for: '1h' });
    const text = await res.text();
    assert.equal(res.status, 409);
    assert.ok(text.length < 4096, `${text.length} bytes`);
    const p = JSON.parse(text) as Problem;
    assert.equal(p.details?.holds?.length, LISTED_HOLDS);
    assert.equal(p.details?.holdsInForce, 100);
    assert.match(p.detail, / and 95 more\. Hold the same plan/);
    const set = await post('/v1/plans/active', 'PUT', { plan: 'power-saver' });
    const setText = await set.text();
    assert.equal(set.status, 409);
    assert.ok(setText.length < 4096, `${setText.length} bytes`);
    assert.match(setText, /and 95 more/);
  });
});

describe('POWERPLAN_MAX_HOLDS', () => {
  const h = perBlock(
    () => secureHarness({ POWERPLAN_MAX_HOLDS: '2' }),
    (x) => x.cleanup(),
  );
  it('sets the cap; a released hold makes room again', async () => {
    const hold = () =>
      h.app.request('http://127.0.0.1/v1/holds', {
        method: 'POST',
        headers: { ...bearer(h.tokens.control), 'content-type': 'application/json' },
        body: JSON.stringify({ plan: 'high-performance', for: '1h' }),
      });
    const a = (await (await hold()).json()) as { hold: { id: string } };
    assert.equal((await hold()).status, 201);
    assert.equal((await hold()).status, 409);
    const del = await h.app.request(`http://127.0.0.1/v1/holds/${a.hold.id}`, {
      method: 'DELETE',
      headers: { ...bearer(h.tokens.control), 'content-type': 'application/json' },
    });
    assert.equal(del.status, 200);
    assert.equal((await hold()).status, 201);
  });
});
