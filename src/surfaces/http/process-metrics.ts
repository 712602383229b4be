/**
 * The process metrics of /metrics (prom-client's default `process_*` and `nodejs_*` set) without
 * its event-loop delay monitor, which samples every 10 ms for the life of the process: 100 wake-ups
 * a second on a server whose idle states the product measures, and a histogram of sampling
 * intervals (the 10 ms included) rather than of delays.
 *
 * The `nodejs_eventloop_lag_*` gauges keep their names and meaning (seconds of delay). They come
 * from a timer that runs only while someone scrapes (from a scrape until SAMPLE_AFTER_SCRAPE_MS
 * without one) and samples once a second: a blocked loop shows as the delay of the next sample.
 * `nodejs_eventloop_lag_seconds` is measured at the scrape itself (the time a setImmediate waits).
 * The quantiles cover the samples since the previous scrape, kept as plain numbers (at most one
 * per second, SAMPLE_AFTER_SCRAPE_MS worth): working the seven figures out of Node's HDR histogram
 * (monitorEventLoopDelay) walks all its buckets for each, about 0.6 ms a scrape, where a handful of
 * samples sorts in microseconds. A scrape with no sample yet leaves them without a sample rather
 * than reporting a made-up figure.
 */
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';

/** How often the monitor samples while scraped: one wake-up a second. */
export const EVENT_LOOP_RESOLUTION_MS = 1000;
/** The monitor stops when no scrape came for this long (Prometheus scrapes every 15 s to 1 min). */
export const SAMPLE_AFTER_SCRAPE_MS = 10 * 60_000;
/** The most samples kept between two scrapes: the oldest go first. */
const MAX_SAMPLES = SAMPLE_AFTER_SCRAPE_MS / EVENT_LOOP_RESOLUTION_MS;
/** prom-client's own monitor, made harmless: the longest period a timer can have (24.8 days). */
const NEVER_MS = 2 ** 31 - 1;

const LAG = 'nodejs_eventloop_lag';

/** The value at or below which p% of the sorted samples lie (nearest rank). */
const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

type Stats = { sorted: readonly number[]; mean: number };
const quantileGauges = [
  ['min', 'The minimum recorded event loop delay.', (s: Stats) => s.sorted[0]!],
  ['max', 'The maximum recorded event loop delay.', (s: Stats) => s.sorted.at(-1)!],
  ['mean', 'The mean of the recorded event loop delays.', (s: Stats) => s.mean],
  [
    'stddev',
    'The standard deviation of the recorded event loop delays.',
    (s: Stats) => Math.sqrt(s.sorted.reduce((a, x) => a + (x - s.mean) ** 2, 0) / s.sorted.length),
  ],
  ['p50', 'The 50th percentile of the recorded event loop delays.', (s: Stats) => percentile(s.sorted, 50)],
  ['p90', 'The 90th percentile of the recorded event loop delays.', (s: Stats) => percentile(s.sorted, 90)],
  ['p99', 'The 99th percentile of the recorded event loop delays.', (s: Stats) => percentile(s.sorted, 99)],
] as const;

export interface ProcessMetrics {
  /** True while the event-loop delay monitor samples (after a scrape, until none for a while). */
  readonly sampling: boolean;
  /** Called at every scrape, before the registry is collected: takes the samples since the last one. */
  scraped(): void;
  /** Stops the monitor (the service shuts down). */
  stop(): void;
}

export const registerProcessMetrics = (registry: Registry): ProcessMetrics => {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: NEVER_MS });
  for (const name of [`${LAG}_seconds`, ...quantileGauges.map(([q]) => `${LAG}_${q}_seconds`)])
    registry.removeSingleMetric(name);

  let stopTimer: NodeJS.Timeout | undefined;
  let sampleTimer: NodeJS.Timeout | undefined;
  /** Delays in seconds since the last scrape, oldest first. */
  let samples: number[] = [];
  // Each sample is how late its timer fired: the first measures from the scrape that started them.
  const arm = () => {
    const due = performance.now() + EVENT_LOOP_RESOLUTION_MS;
    sampleTimer = setTimeout(() => {
      samples.push(Math.max(0, performance.now() - due) / 1000);
      if (samples.length > MAX_SAMPLES) samples.shift();
      arm();
    }, EVENT_LOOP_RESOLUTION_MS);
    sampleTimer.unref();
  };

  /** The figures at the last scrape, for the samples since the one before. */
  type Period = Record<(typeof quantileGauges)[number][0], number>;
  let period: Period | undefined;
  const takePeriod = () => {
    period = undefined;
    if (samples.length > 0) {
      const sorted = samples.sort((x, y) => x - y);
      const stats = { sorted, mean: sorted.reduce((a, x) => a + x, 0) / sorted.length };
      period = Object.fromEntries(quantileGauges.map(([q, , read]) => [q, read(stats)])) as Period;
    }
    samples = [];
  };

  new Gauge({
    name: `${LAG}_seconds`,
    help: 'Lag of event loop in seconds.',
    registers: [registry],
    aggregator: 'average',
    collect() {
      const start = process.hrtime.bigint();
      return new Promise<void>((resolve) =>
        setImmediate(() => {
          this.set(Number(process.hrtime.bigint() - start) / 1e9);
          resolve();
        }),
      );
    },
  });
  for (const [q, help] of quantileGauges) {
    new Gauge({
      name: `${LAG}_${q}_seconds`,
      help: `${help} Sampled once a second, only while scraped.`,
      registers: [registry],
      aggregator: 'average',
      collect() {
        // reset() alone leaves a label-less gauge at 0: no sample is what "no figure" looks like.
        this.reset();
        this.remove();
        if (period) this.set(period[q]);
      },
    });
  }

  const stop = () => {
    clearTimeout(stopTimer);
    stopTimer = undefined;
    clearTimeout(sampleTimer);
    sampleTimer = undefined;
  };
  return {
    get sampling() {
      return sampleTimer !== undefined;
    },
    scraped() {
      takePeriod();
      if (sampleTimer === undefined) arm();
      clearTimeout(stopTimer);
      stopTimer = setTimeout(stop, SAMPLE_AFTER_SCRAPE_MS);
      stopTimer.unref();
    },
    stop,
  };
};
