/** /metrics publishes drift, the desired state, the holds in force and the time until they end. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HoldResult } from '../../src/domain/holds.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { call } from '../support/call.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { appOver } from '../support/server.ts';
import { until } from '../support/until.ts';

const inState = `powerplan_in_desired_state{plan="${SCHEME.highPerformance}"}`;

const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('hold and desired-state metrics', () => {
  const t = depsPerBlock({ POWERPLAN_DESIRED_PLAN: 'high-performance', POWERPLAN_DESIRED_INTERVAL: '1' });
  const app = appOver(t);

  const scrape = async () => {
    const res = await app.request('/metrics');
    assert.equal(res.status, 200);
    return res.text();
  };

  it('has no hold or desired-state samples before anything happened', async () => {
    const text = await scrape();
    assert.equal(sample(text, 'powerplan_holds_active'), 0);
    assert.equal(sample(text, 'powerplan_drift_total'), 0);
    assert.equal(sample(text, inState), undefined, 'no check ran yet');
    assert.equal(sample(text, 'powerplan_hold_expiry_seconds{hold="next"}'), undefined);
  });

  it('counts drift and shows the desired state', async () => {
    t.deps.desired.start();
    await until('the drift', async () => t.deps.desired.driftTotal === 1);
    let text = await scrape();
    assert.equal(sample(text, 'powerplan_drift_total'), 1);
    assert.equal(sample(text, inState), 0);
    await t.deps.backend.setActive(SCHEME.highPerformance);
    await until('the desired state', async () => t.deps.desired.inDesiredState === true);
    text = await scrape();
    assert.equal(sample(text, inState), 1);
  });

  it('shows the holds in force and the seconds until they end', async () => {
    const a = await call<HoldResult>(t.deps, 'hold_power_plan', { plan: 'high-performance', for: '10m' });
    const b = await call<HoldResult>(t.deps, 'hold_power_plan', { plan: 'high-performance', for: '2h' });
    const text = await scrape();
    assert.equal(sample(text, 'powerplan_holds_active'), 2);
    const next = sample(text, 'powerplan_hold_expiry_seconds{hold="next"}') ?? 0;
    const restore = sample(text, 'powerplan_hold_expiry_seconds{hold="restore"}') ?? 0;
    assert.ok(next > 500 && next <= 600, String(next));
    assert.ok(restore > 7000 && restore <= 7200, String(restore));
    await call(t.deps, 'release_power_plan', { id: a.hold.id });
    await call(t.deps, 'release_power_plan', { id: b.hold.id });
    assert.equal(sample(await scrape(), 'powerplan_holds_active'), 0);
  });
});
