/**
 * The process metrics of /metrics (prom-client's default `process_*` and `nodejs_*` set) without
 * its event-loop delay monitor, which samples every 10 ms for the life of the process: 100 wake-ups
 * a second on a server whose idle states the product measures, and a histogram of sampling
 * intervals (the 10 ms included) rather than of delays.
 *
 * The `nodejs_eventloop_lag_*` gauges keep their names and meaning (seconds of delay). They come
 * from a monitor that runs only while someone scrapes (from a scrape until SAMPLE_AFTER_SCRAPE_MS
 * without one) and samples once a second: a blocked loop shows as the delay of the next sample.
 * `nodejs_eventloop_lag_seconds` is measured at the scrape itself (the time a setImmediate waits).
 * The quantiles cover the samples since the previous scrape; a scrape with no sample yet leaves
 * them without a sample rather than reporting a made-up figure.
 */
import perfHooks, { type IntervalHistogram } from 'node:perf_hooks';
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';

/** How often the monitor samples while scraped: one wake-up a second. */
export const EVENT_LOOP_RESOLUTION_MS = 1000;
/** The monitor stops when no scrape came for this long (Prometheus scrapes every 15 s to 1 min). */
export const SAMPLE_AFTER_SCRAPE_MS = 10 * 60_000;
/** prom-client's own monitor, made harmless: the longest period a timer can have (24.8 days). */
const NEVER_MS = 2 ** 31 - 1;

const LAG = 'nodejs_eventloop_lag';
const quantileGauges = [
  ['min', 'The minimum recorded event loop delay.', (h: IntervalHistogram) => h.min],
  ['max', 'The maximum recorded event loop delay.', (h: IntervalHistogram) => h.max],
  ['mean', 'The mean of the recorded event loop delays.', (h: IntervalHistogram) => h.mean],
  ['stddev', 'The standard deviation of the recorded event loop delays.', (h: IntervalHistogram) => h.stddev],
  [
    'p50',
    'The 50th percentile of the recorded event loop delays.',
    (h: IntervalHistogram) => h.percentile(50),
  ],
  [
    'p90',
    'The 90th percentile of the recorded event loop delays.',
    (h: IntervalHistogram) => h.percentile(90),
  ],
  [
    'p99',
    'The 99th percentile of the recorded event loop delays.',
    (h: IntervalHistogram) => h.percentile(99),
  ],
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

  // Looked up on the module object at call time (as prom-client does), so a test can observe it.
  const histogram = perfHooks.monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  let stopTimer: NodeJS.Timeout | undefined;
  let sampling = false;
  // The first sample after enable() measures from the enable; Node records the whole interval
  // between two samples, so the delay is what exceeds the resolution.
  const delaySeconds = (ns: number) => Math.max(0, ns / 1e6 - EVENT_LOOP_RESOLUTION_MS) / 1000;

  /** The histogram's figures at the last scrape, for the samples since the one before. */
  type Period = Record<(typeof quantileGauges)[number][0], number>;
  let period: Period | undefined;
  const takePeriod = () => {
    period = undefined;
    if (histogram.count > 0) {
      period = Object.fromEntries(
        quantileGauges.map(([q, , read]) => [
          q,
          q === 'stddev' ? read(histogram) / 1e9 : delaySeconds(read(histogram)),
        ]),
      ) as Period;
    }
    histogram.reset();
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
        this.reset();
        if (period) this.set(period[q]);
      },
    });
  }

  const stop = () => {
    clearTimeout(stopTimer);
    stopTimer = undefined;
    if (sampling) histogram.disable();
    sampling = false;
  };
  return {
    get sampling() {
      return sampling;
    },
    scraped() {
      takePeriod();
      if (!sampling) {
        histogram.enable();
        sampling = true;
      }
      clearTimeout(stopTimer);
      stopTimer = setTimeout(stop, SAMPLE_AFTER_SCRAPE_MS);
      stopTimer.unref();
    },
    stop,
  };
};
