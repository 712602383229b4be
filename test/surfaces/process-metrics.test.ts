/**
 * The event-loop delay gauges: sampled once a second while scraped, from the scrape that starts
 * the sampler; a loop blocked between two scrapes shows in the next scrape's figures, and a scrape
 * with no sample since the previous one leaves the quantiles without a sample.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { EVENT_LOOP_RESOLUTION_MS, registerProcessMetrics } from '../../src/surfaces/http/process-metrics.ts';

const value = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('event-loop delay gauges', () => {
  it('a blocked loop shows as the delay of the next sample; no sample since the last scrape, no figure', async () => {
    const registry = new Registry();
    const m = registerProcessMetrics(registry);
    try {
      assert.equal(m.sampling, false, 'samples before any scrape');
      m.scraped();
      assert.equal(m.sampling, true);
      let text = await registry.metrics();
      assert.equal(value(text, 'nodejs_eventloop_lag_max_seconds'), undefined, 'a figure without a sample');
      // Busy for 400 ms just before the first sample is due: it fires about 400 ms late.
      await sleep(EVENT_LOOP_RESOLUTION_MS - 100);
      const until = performance.now() + 400;
      while (performance.now() < until);
      await sleep(EVENT_LOOP_RESOLUTION_MS + 200); // the second sample, on time
      m.scraped();
      text = await registry.metrics();
      const max = value(text, 'nodejs_eventloop_lag_max_seconds')!;
      const min = value(text, 'nodejs_eventloop_lag_min_seconds')!;
      const p99 = value(text, 'nodejs_eventloop_lag_p99_seconds')!;
      const mean = value(text, 'nodejs_eventloop_lag_mean_seconds')!;
      const stddev = value(text, 'nodejs_eventloop_lag_stddev_seconds')!;
      assert.ok(max >= 0.25 && max < 2, `max ${max} s after a 400-ms block`);
      assert.ok(min >= 0 && min < max, `min ${min} s, max ${max} s`);
      assert.equal(p99, max, 'p99 of two samples is the larger');
      assert.ok(Math.abs(mean - (min + max) / 2) < 1e-9, `mean ${mean} of ${min} and ${max}`);
      assert.ok(Math.abs(stddev - (max - min) / 2) < 1e-9, `stddev ${stddev} of ${min} and ${max}`);
      // Straight away again: nothing sampled since, no figures.
      m.scraped();
      text = await registry.metrics();
      assert.equal(value(text, 'nodejs_eventloop_lag_max_seconds'), undefined);
      assert.match(text, /^nodejs_eventloop_lag_seconds \d/m);
    } finally {
      m.stop();
    }
    assert.equal(m.sampling, false, 'samples after stop');
  });
});
