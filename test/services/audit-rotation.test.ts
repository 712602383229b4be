/**
 * The audit trail rotates by size (POWERPLAN_AUDIT_MAX_BYTES x POWERPLAN_AUDIT_FILES), and
 * GET /v1/audit reads from the newest record backwards across the rotated files (limit, since);
 * the plan-change counter of /metrics follows a rotation without losing or double-counting.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { afterEach, describe, it } from 'node:test';
import type { AuditRecord } from '../../src/domain/audit.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { call } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';

let t: TestDeps | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

/** Switches the plan `n` times, alternating, so that each call is a change. */
let switches = 0;
const toggle = async (deps: TestDeps['deps'], n: number) => {
  for (let i = 0; i < n; i++) {
    await call(deps, 'set_power_plan', { plan: switches++ % 2 ? 'balanced' : 'high-performance' });
  }
};

describe('audit rotation', () => {
  it('rotates by size, keeps the configured number of files, and GET /v1/audit reads across them', async () => {
    t = await testDeps({ POWERPLAN_AUDIT_MAX_BYTES: '4096', POWERPLAN_AUDIT_FILES: '3' });
    const app = createApp(t.deps);
    const changes = async () =>
      Number(/^powerplan_plan_changes_total (\d+)$/m.exec(await (await app.request('/metrics')).text())?.[1]);
    await toggle(t.deps, 4);
    assert.equal(await changes(), 4);
    // Scraped now and then while the log rotates (records dropped before any scrape cannot count).
    for (let i = 0; i < 12; i++) {
      await toggle(t.deps, 5);
      assert.equal(await changes(), 4 + 5 * (i + 1));
    }
    const files = t.deps.store.audit.files();
    assert.deepEqual(
      files.map((f) => existsSync(f)),
      [true, true, true],
    );
    assert.equal(existsSync(`${files[0]}.3`), false, 'no fourth file');
    for (const f of files) assert.ok(statSync(f).size <= 4096, `${f} is within the size limit`);
    assert.equal(await changes(), 64, 'the counter followed the rotations');

    const kept = (await t.deps.store.readLines('audit.jsonl')) as AuditRecord[];
    assert.ok(kept.length > 10 && kept.length < 64, `the oldest records were dropped (${kept.length} kept)`);
    const get = async (query: string) => {
      const res = await app.request(`/v1/audit?${query}`);
      assert.equal(res.status, 200);
      return (await res.json()) as { records: AuditRecord[]; truncated: boolean };
    };
    const all = await get('limit=1000');
    assert.equal(all.truncated, false);
    assert.deepEqual(all.records, kept, 'every kept record, oldest first, across the files');
    const last5 = await get('limit=5');
    assert.equal(last5.truncated, true);
    assert.deepEqual(last5.records, kept.slice(-5));
    // `since` a record that lives in the oldest file: the answer spans all three files.
    const from = kept[2]!;
    const since = await get(`since=${encodeURIComponent(from.time)}&limit=1000`);
    assert.deepEqual(
      since.records,
      kept.filter((r) => r.time >= from.time),
    );
    // A torn line in a rotated file is skipped, not fatal.
    await appendFile(files[1]!, '{"time":"20');
    assert.deepEqual((await get('limit=1000')).records, kept);
  });
});
