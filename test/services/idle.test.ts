/**
 * An idle service wakes up only for work it has: no timer under a second, nothing armed at all
 * while no hold, desired plan or restore exists, the event-loop delay monitor off until someone
 * scrapes /metrics (and then once a second), and a hold taken by another process seen
 * through the state directory's watcher rather than a poll. Counts of live timers, not timings.
 */
import assert from 'node:assert/strict';
import perfHooks from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { buildDeps } from '../../src/deps.ts';
import { localCaller } from '../../src/domain/scopes.ts';
import { Schedule } from '../../src/lib/schedule.ts';
import { EVENT_LOOP_RESOLUTION_MS } from '../../src/surfaces/http/process-metrics.ts';
import { startHttpServer } from '../../src/surfaces/http/server.ts';
import { testDeps } from '../support/deps.ts';
import { until } from '../support/until.ts';

interface LiveTimer {
  kind: 'timeout' | 'interval';
  ms: number;
  stack: string;
}

/** Records every timer made through the globals (the service's code uses them) while it is live. */
const live = new Map<object, LiveTimer>();
const real = {
  setTimeout: globalThis.setTimeout,
  setInterval: globalThis.setInterval,
  clearTimeout: globalThis.clearTimeout,
  clearInterval: globalThis.clearInterval,
};
const monitors: { resolution: number; enabled: boolean }[] = [];
const realMonitor = perfHooks.monitorEventLoopDelay;

before(() => {
  const track =
    (kind: LiveTimer['kind'], make: typeof setTimeout) =>
    (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      const handle: object = make(
        (...a: unknown[]) => {
          if (kind === 'timeout') live.delete(handle);
          fn(...a);
        },
        ms,
        ...args,
      );
      live.set(handle, { kind, ms: ms ?? 0, stack: new Error().stack ?? '' });
      return handle;
    };
  globalThis.setTimeout = track('timeout', real.setTimeout) as unknown as typeof setTimeout;
  globalThis.setInterval = track(
    'interval',
    real.setInterval as typeof setTimeout,
  ) as unknown as typeof setInterval;
  globalThis.clearTimeout = ((h: NodeJS.Timeout | undefined) => {
    if (h) live.delete(h);
    real.clearTimeout(h);
  }) as typeof clearTimeout;
  globalThis.clearInterval = ((h: NodeJS.Timeout | undefined) => {
    if (h) live.delete(h);
    real.clearInterval(h);
  }) as typeof clearInterval;
  perfHooks.monitorEventLoopDelay = (options) => {
    const h = realMonitor(options);
    const m = { resolution: options?.resolution ?? 10, enabled: false };
    monitors.push(m);
    const { enable, disable } = h;
    h.enable = () => {
      m.enabled = true;
      return enable.call(h);
    };
    h.disable = () => {
      m.enabled = false;
      return disable.call(h);
    };
    return h;
  };
});
after(() => {
  Object.assign(globalThis, real);
  perfHooks.monitorEventLoopDelay = realMonitor;
});

/** Timers of the service under test, not the test's own (until, fetch's client). */
const serviceTimers = () =>
  [...live.values()].filter((t) => !t.stack.includes('until.ts') && !t.stack.includes('undici'));
/** A monitor that samples at least once a minute (prom-client's own is left at the longest period). */
const sampling = () => monitors.filter((m) => m.enabled && m.resolution < 60_000);
const describeTimers = (ts: LiveTimer[]) => ts.map((t) => `${t.kind} ${t.ms} ms\n${t.stack}`).join('\n');
/** Lets the start-up's first checks and reads finish. */
const settle = () => new Promise((r) => real.setTimeout(r, 300));

const started = async (env: Record<string, string> = {}) => {
  const t = await testDeps(env);
  const server = await startHttpServer({
    ...t.deps,
    config: { ...t.deps.config, host: '127.0.0.1', port: 0 },
  });
  await settle();
  return {
    t,
    server,
    stop: async () => {
      await server.close();
      await t.cleanup();
    },
  };
};

describe('an idle service', () => {
  test('arms no timer at all while nothing is held, desired or owed, and no monitor runs unscraped', async () => {
    monitors.length = 0;
    const s = await started();
    try {
      const timers = serviceTimers();
      assert.deepEqual(timers, [], describeTimers(timers));
      assert.ok(
        monitors.every((m) => !m.enabled || m.resolution >= 1000),
        `an event-loop delay monitor samples faster than once a second: ${JSON.stringify(monitors)}`,
      );
      assert.deepEqual(sampling(), [], 'the event-loop delay monitor runs before any scrape');
    } finally {
      await s.stop();
    }
  });

  test('scraped: the event-loop delay sampler runs at one second, and stops with the service', async () => {
    monitors.length = 0;
    const s = await started();
    try {
      const res = await fetch(`${s.server.url}/metrics`);
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(text, /^nodejs_eventloop_lag_seconds \d/m);
      assert.match(text, /^process_cpu_seconds_total /m);
      assert.ok(
        serviceTimers().some((t) => t.kind === 'timeout' && t.ms === EVENT_LOOP_RESOLUTION_MS),
        `a scrape starts the event-loop delay sampler:\n${describeTimers(serviceTimers())}`,
      );
      assert.ok(
        monitors.every((m) => !m.enabled || m.resolution >= 1000),
        `an event-loop delay monitor samples faster than once a second: ${JSON.stringify(monitors)}`,
      );
      const fast = serviceTimers().filter((t) => t.ms < 1000);
      assert.deepEqual(fast, [], describeTimers(fast));
    } finally {
      await s.stop();
    }
    assert.deepEqual(sampling(), [], 'a monitor still runs after the service stopped');
    const left = serviceTimers().filter((t) => t.ms === EVENT_LOOP_RESOLUTION_MS);
    assert.deepEqual(left, [], `the sampler still runs after the service stopped:\n${describeTimers(left)}`);
  });

  test('with a desired plan enforced: one timer, at the configured interval, none under a second', async () => {
    const s = await started({
      POWERPLAN_DESIRED_PLAN: 'balanced',
      POWERPLAN_ENFORCE: 'true',
      POWERPLAN_DESIRED_INTERVAL: '1',
    });
    try {
      await until('the first desired-state check', () => s.t.deps.desired.checks > 0);
      const timers = serviceTimers();
      assert.equal(timers.length, 1, describeTimers(timers));
      assert.ok(timers[0]!.ms >= 900 && timers[0]!.ms <= 1000, describeTimers(timers));
      assert.ok(timers[0]!.stack.includes('schedule.ts'), describeTimers(timers));
    } finally {
      await s.stop();
    }
    assert.deepEqual(serviceTimers(), [], 'timers left behind by a stopped service');
  });

  test('a hold taken by another process is seen without polling and ends on time', async () => {
    const s = await started();
    try {
      // Where the directory cannot be watched (no inotify instance left on a crowded machine) the
      // service falls back to a 5-s poll: still no timer under a second.
      const probe = s.t.deps.store.watch(['restore-journal.json'], () => {});
      probe?.();
      if (probe) assert.deepEqual(serviceTimers(), []);
      else
        assert.ok(
          serviceTimers().every((t) => t.ms >= 1000),
          describeTimers(serviceTimers()),
        );
      // Another process over the same state directory (a CLI run): its own deps, never started.
      const cli = buildDeps(s.t.deps.config);
      await cli.holds.create(localCaller, { plan: 'high-performance', seconds: 1 });
      await until(
        "the server to arm the expiry of the other process's hold",
        () => serviceTimers().length === 1,
      );
      await until(
        'the hold to end and the plan to be restored',
        async () => (await s.t.deps.backend.getActive()).plan?.name === 'Balanced',
        10_000,
      );
      if (probe) await until('nothing left armed once the hold ended', () => serviceTimers().length === 0);
      cli.shutdown.abort();
    } finally {
      await s.stop();
    }
  });
});

describe('the schedule', () => {
  test('a timer firing before Date.now() reaches its time still runs the job it was armed for', async (t) => {
    const sched = new Schedule();
    const ran: string[] = [];
    const start = Date.now();
    sched.set('expiry', start + 30, () => ran.push('expiry'));
    sched.set('check', start + 400, () => ran.push('check'), 500);
    // From here on the wall clock lags the timers by 20 ms (the event loop's cached clock ahead).
    const real = Date.now.bind(Date);
    t.mock.method(Date, 'now', () => real() - 20);
    await until('the first wake-up', () => ran.length > 0);
    assert.deepEqual(ran, ['expiry', 'check']);
    sched.stop();
  });

  test('coalesces: a job within its slack of another runs on the same wake-up', async () => {
    const sched = new Schedule();
    const ran: string[] = [];
    const now = Date.now();
    sched.set('expiry', now + 50, () => ran.push('expiry'));
    sched.set('check', now + 400, () => ran.push('check'), 500);
    sched.set('later', now + 60_000, () => ran.push('later'), 10);
    await until('the first wake-up', () => ran.length > 0);
    assert.deepEqual(ran, ['expiry', 'check']);
    assert.deepEqual(
      sched.pending().map((j) => j.name),
      ['later'],
    );
    sched.stop();
    assert.deepEqual(sched.pending(), []);
  });
});
