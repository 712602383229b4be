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
      // Busy for longer than a period: the timer due in it fires at least 400 ms late, however
      // the sleeps around it stretch on a loaded machine.
      await sleep(50);
      const until = performance.now() + EVENT_LOOP_RESOLUTION_MS + 400;
      while (performance.now() < until);
      await sleep(50); // the late timer runs and keeps its sample
      m.scraped();
      text = await registry.metrics();
      const [min, max, mean, stddev, p50, p90, p99] = [
        'min',
        'max',
        'mean',
        'stddev',
        'p50',
        'p90',
        'p99',
      ].map((q) => value(text, `nodejs_eventloop_lag_${q}_seconds`)!) as [
        number,
        number,
        number,
        number,
        number,
        number,
        number,
      ];
      assert.ok(max >= 0.35 && max < 5, `max ${max} s after a block of a period and 400 ms`);
      assert.ok(min >= 0 && min <= mean && mean <= max, `min ${min}, mean ${mean}, max ${max}`);
      assert.ok(min <= p50 && p50 <= p90 && p90 <= p99 && p99 <= max, `p50 ${p50}, p90 ${p90}, p99 ${p99}`);
      assert.ok(stddev >= 0 && stddev <= (max - min) / 2 + 1e-9, `stddev ${stddev} within [${min}, ${max}]`);
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
