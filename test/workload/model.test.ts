import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { burstModel } from '../../src/advice/burst-model.ts';
import {
  lossesAfterLongestGap,
  lossesAtGaps,
  type PlanCosts,
  rampLossAt,
  wakeCostAt,
} from '../../src/advice/plan-losses.ts';
import { estimateWorkloadCost, MIN_BUSY_SHARE } from '../../src/advice/workload-cost.ts';
import { TOO_LITTLE_WORK, type WorkloadObservation } from '../../src/domain/workload.ts';

const observation = (
  busyShare: number,
  entriesPerSecond: number,
  meanIdleUs: number,
  exitLatencyUs = 10,
): WorkloadObservation => {
  const windowSeconds = 30;
  const cpus = 2;
  const busySeconds = busyShare * cpus * windowSeconds;
  return {
    source: 'cpuidle',
    since: 'window',
    windowSeconds,
    cpus,
    busyShare,
    busySeconds,
    idleEntriesPerSecond: entriesPerSecond,
    meanIdlePeriodUs: meanIdleUs,
    meanBusyPeriodUs: entriesPerSecond ? (busySeconds * 1e6) / windowSeconds / entriesPerSecond : null,
    states: [
      { name: 'C1', share: 1, entriesPerSecond, meanPeriodUs: meanIdleUs, exitLatencyUs, above: 0, below: 0 },
    ],
    perCpu: [],
    perCpuTruncated: false,
  };
};

/** A clock that loses `lossUs` over a `rampUs` ramp after 1 ms or more idle; wake-ups cost 20 us more after 1 ms. */
const costs = (
  lossUs: number,
  rampUs: number,
  wakeUs: number,
  start: { startSlowdown: { mid: number; low: number; high: number }; unitUs: number } = {
    startSlowdown: { mid: 0, low: 0, high: 0 },
    unitUs: 0,
  },
): PlanCosts => ({
  basis: 'benchmark',
  benchmarkId: 'bm-20260101-000000-abcdef',
  wake: [
    { gapUs: 100, costUs: { mid: 0, low: 0, high: 0 } },
    { gapUs: 1000, costUs: { mid: wakeUs, low: wakeUs * 0.8, high: wakeUs * 1.2 } },
  ],
  ramp: [
    { gapUs: 10_000, lossUs: { mid: lossUs / 2, low: lossUs / 4, high: lossUs }, rampUs, ...start },
    { gapUs: 100_000, lossUs: { mid: lossUs, low: lossUs * 0.8, high: lossUs * 1.2 }, rampUs, ...start },
  ],
});

const busy = fc.double({ min: 0.02, max: 0.95, noNaN: true });
const entries = fc.double({ min: 10, max: 100_000, noNaN: true });
const idleUs = fc.double({ min: 10, max: 1_000_000, noNaN: true });
const loss = fc.double({ min: 0, max: 5000, noNaN: true });

describe('the workload cost model (property-tested)', () => {
  it('the range holds the estimate, and nothing is negative', () => {
    fc.assert(
      fc.property(busy, entries, idleUs, loss, (b, n, m, l) => {
        const out = estimateWorkloadCost(observation(b, n, m), costs(l, 2000, 20));
        assert.ok(out.estimate);
        const e = out.estimate;
        assert.ok(e.low <= e.addedPercent && e.addedPercent <= e.high, JSON.stringify(e));
        assert.ok(e.low >= 0 && e.wakeUpPercent >= 0 && e.rampPercent >= 0);
      }),
    );
  });

  it('a costlier plan never costs less, and zero costs cost nothing', () => {
    fc.assert(
      fc.property(busy, entries, idleUs, loss, loss, (b, n, m, l1, l2) => {
        const [lo, hi] = l1 <= l2 ? [l1, l2] : [l2, l1];
        const a = estimateWorkloadCost(observation(b, n, m), costs(lo, 2000, 20)).estimate!;
        const c = estimateWorkloadCost(observation(b, n, m), costs(hi, 2000, 20)).estimate!;
        assert.ok(a.addedPercent <= c.addedPercent + 1e-9);
        const none = estimateWorkloadCost(observation(b, n, m), costs(0, 2000, 0)).estimate!;
        assert.equal(none.addedPercent, 0);
        assert.equal(none.high, 0);
      }),
    );
  });

  it('longer idle gaps cost at least as much per wake-up (a clock that drops further, a deeper state)', () => {
    fc.assert(
      fc.property(idleUs, idleUs, fc.double({ min: 1, max: 100_000, noNaN: true }), (g1, g2, b) => {
        const [short, long] = g1 <= g2 ? [g1, g2] : [g2, g1];
        const c = costs(1000, 2000, 20);
        assert.ok(wakeCostAt(c, short, 'mid') <= wakeCostAt(c, long, 'mid') + 1e-9);
        assert.ok(rampLossAt(c, short, b, 'mid') <= rampLossAt(c, long, b, 'mid') + 1e-9);
      }),
    );
  });

  it('a ramp loss never exceeds the whole loss, and a busy period shorter than the ramp loses its share', () => {
    const c = costs(1000, 2000, 0);
    assert.equal(rampLossAt(c, 1_000_000, 10_000, 'mid'), 1000);
    assert.equal(rampLossAt(c, 1_000_000, 500, 'mid'), 250);
    // Below the shortest gap measured the loss shrinks with the gap.
    assert.equal(rampLossAt(c, 5000, 10_000, 'mid'), 250);
  });

  it("a ramp steepest at its start: a request shorter than the first unit loses the first unit's slowdown", () => {
    // The first 100 us run at a third of the speed (slowdown 2), 400 us lost over a 2000 us ramp in all.
    const c = costs(400, 2000, 0, { startSlowdown: { mid: 2, low: 2, high: 2 }, unitUs: 100 });
    assert.equal(rampLossAt(c, 1_000_000, 50, 'mid'), 100);
    assert.equal(rampLossAt(c, 1_000_000, 100, 'mid'), 200);
    assert.equal(rampLossAt(c, 1_000_000, 1050, 'mid'), 300);
    assert.equal(rampLossAt(c, 1_000_000, 5000, 'mid'), 400);
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        fc.double({ min: 0, max: 10_000, noNaN: true }),
        (b1, b2) => {
          const [short, long] = b1 <= b2 ? [b1, b2] : [b2, b1];
          assert.ok(rampLossAt(c, 1_000_000, short, 'mid') <= rampLossAt(c, 1_000_000, long, 'mid') + 1e-9);
          assert.ok(rampLossAt(c, 1_000_000, long, 'mid') <= 400 + 1e-9);
        },
      ),
    );
  });

  it('the same work with the same pattern: the added share does not depend on how long it was watched', () => {
    fc.assert(
      fc.property(busy, entries, idleUs, (b, n, m) => {
        const o = observation(b, n, m);
        const twice = { ...o, windowSeconds: 60, busySeconds: (o.busySeconds ?? 0) * 2 };
        const c = costs(800, 2000, 20);
        assert.equal(
          estimateWorkloadCost(o, c).estimate?.addedPercent,
          estimateWorkloadCost(twice, c).estimate?.addedPercent,
        );
      }),
    );
  });

  it('an idle server gets a reason, never a number', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: MIN_BUSY_SHARE * 0.99, noNaN: true }),
        entries,
        idleUs,
        (b, n, m) => {
          const out = estimateWorkloadCost(observation(b, n, m), costs(1000, 2000, 20));
          assert.equal(out.estimate, null);
          assert.equal(out.reason, TOO_LITTLE_WORK);
        },
      ),
    );
  });

  it('a performance plan recovers the difference, never a negative share', () => {
    const o = observation(0.3, 2000, 50_000);
    const out = estimateWorkloadCost(o, costs(1000, 2000, 20), costs(100, 2000, 5)).estimate!;
    assert.ok(out.recoverablePercent !== undefined && out.recoverablePercent > 0);
    assert.ok(out.recoverablePercent <= out.addedPercent);
    const none = estimateWorkloadCost(o, costs(100, 2000, 5), costs(1000, 2000, 20)).estimate!;
    assert.equal(none.recoverablePercent, 0);
  });

  it("published exit latencies: each entry pays at most its state's latency", () => {
    const o = observation(0.5, 1000, 1000, 100);
    const e = estimateWorkloadCost(o, { basis: 'published-latencies', wake: [], ramp: [] }).estimate!;
    // 1000 entries/s x 100 us over 1 s of work per s (2 CPUs, half busy): 10%.
    assert.equal(e.addedPercent, 10);
    assert.equal(e.high, 10);
    assert.equal(e.low, 5);
    assert.equal(e.basis, 'published-latencies');
  });

  it("a measured wake-up counts up to its state's exit latency (a VM's halt: the rest is the hypervisor's); without one, in full", () => {
    // 1000 wake-ups/s after gaps of 100 ms on average, each measured 95 us dearer than after the shortest gap,
    // out of a state published at 1 us (the haltpoll driver's): 1 us each is the plan's.
    const c = costs(0, 20_000, 95);
    const halt = estimateWorkloadCost(observation(0.2, 1000, 100_000, 1), c).estimate!;
    // 1000 x 1 us per second over 0.4 s of work per second (2 CPUs, 20% busy): 0.25%.
    assert.equal(halt.wakeUpPercent, 0.3);
    assert.equal(halt.high, 0.3);
    const deep = estimateWorkloadCost(observation(0.2, 1000, 100_000, 200), c).estimate!;
    // 1000 x 95 us: 23.75%, under the published 200 us.
    assert.equal(deep.wakeUpPercent, 23.8);
    const unpublished: WorkloadObservation = observation(0.2, 1000, 100_000);
    unpublished.states = unpublished.states.map((st) => ({ ...st, exitLatencyUs: null }));
    assert.equal(estimateWorkloadCost(unpublished, c).estimate!.wakeUpPercent, 23.8);
  });

  it('idle periods split by the states: a few long gaps among many short ones set off the ramp the overall mean hides', () => {
    // 1000 wake-ups/s: 950 out of C1 after 100 us, 50 out of C6 after 30 ms; overall mean 1.6 ms.
    const split = observation(0.2, 1000, 1595);
    const state = { share: 0, exitLatencyUs: 0, above: 0, below: 0 };
    split.states = [
      { ...state, name: 'C1', entriesPerSecond: 950, meanPeriodUs: 100 },
      { ...state, name: 'C6', entriesPerSecond: 50, meanPeriodUs: 30_000 },
    ];
    const one: WorkloadObservation = {
      ...split,
      states: [{ ...state, name: 'C6', entriesPerSecond: 1000, meanPeriodUs: 1595 }],
    };
    // A clock that falls only after more than 10 ms idle and then loses 4 ms over a 2 ms ramp.
    const point = (gapUs: number, lossUs: number) => ({
      gapUs,
      lossUs: { mid: lossUs, low: lossUs, high: lossUs },
      rampUs: 2000,
      startSlowdown: { mid: 0, low: 0, high: 0 },
      unitUs: 0,
    });
    const c: PlanCosts = {
      basis: 'benchmark',
      wake: [],
      ramp: [point(1000, 0), point(10_000, 0), point(20_000, 4000), point(100_000, 4000)],
    };
    const mixed = estimateWorkloadCost(split, c).estimate!;
    const single = estimateWorkloadCost(one, c).estimate!;
    // One exponential of 1.6 ms: hardly a gap beyond 10 ms.
    assert.ok(single.rampPercent < 0.5, `one exponential: ${single.rampPercent}%`);
    // 50 C6 gaps/s, about half of them beyond 20 ms, each before a 0.4 ms busy period losing
    // 0.4 / 2 of 4 ms: about 20 ms per second, on 0.4 s of work: about 5%.
    assert.ok(mixed.rampPercent >= 3 && mixed.rampPercent <= 8, `split: ${mixed.rampPercent}%`);
    // The range's low end keeps the other extreme (every period at the mean): no ramp.
    assert.ok(mixed.low < 0.5, `low: ${mixed.low}%`);
  });

  it("without idle states to choose (no cpuidle driver: a VM halts) no wake-up time is the plan's; the ramp still is", () => {
    const withStates = observation(0.2, 1000, 5000);
    const halted: WorkloadObservation = { ...withStates, source: 'interrupts', states: [] };
    const c = costs(4000, 20_000, 50);
    const a = estimateWorkloadCost(withStates, c).estimate!;
    const b = estimateWorkloadCost(halted, c).estimate!;
    assert.ok(a.wakeUpPercent > 0);
    assert.equal(b.wakeUpPercent, 0);
    assert.equal(b.rampPercent, a.rampPercent);
    assert.equal(b.addedPercent, b.rampPercent);
  });

  it('the ramp half CPU by CPU: a poller on another CPU does not hide the long gaps of the CPU doing the work', () => {
    // CPU 0: 20 requests/s of 3 ms after ~47 ms gaps; CPU 1: 4000 wake-ups/s of 5 us every 250 us.
    const work = { cpu: 0, busyShare: 0.06, idleEntriesPerSecond: 20, meanIdlePeriodUs: 47_000 };
    const poller = { cpu: 1, busyShare: 0.02, idleEntriesPerSecond: 4000, meanIdlePeriodUs: 245 };
    const pattern = (perCpu: WorkloadObservation['perCpu']): WorkloadObservation => ({
      ...observation(0.04, 4020, 485),
      source: 'interrupts',
      states: [],
      perCpu,
    });
    const c = costs(6000, 20_000, 0);
    const split = estimateWorkloadCost(pattern([work, poller]), c).estimate!;
    const alone = estimateWorkloadCost(
      { ...pattern([work]), cpus: 1, busySeconds: 0.06 * 30, idleEntriesPerSecond: 20, busyShare: 0.06 },
      c,
    ).estimate!;
    const pooled = estimateWorkloadCost(pattern([]), c).estimate!;
    assert.ok(pooled.rampPercent < split.rampPercent / 4, `${pooled.rampPercent} vs ${split.rampPercent}`);
    // The poller adds no ramp: the time added per second is the working CPU's alone.
    const addedPerSecond = (e: typeof split, entriesPerSecond: number) =>
      e.addedUsPerWakeup * entriesPerSecond;
    assert.ok(
      Math.abs(addedPerSecond(split, 4020) - addedPerSecond(alone, 20)) <= addedPerSecond(alone, 20) * 0.01,
      `${split.addedUsPerWakeup} x 4020 vs ${alone.addedUsPerWakeup} x 20`,
    );
  });
});

describe('the ramp half from the loss curve, the work bursts and a performance plan (the model since the loss curve)', () => {
  /** A step clock: after a gap of 20 ms or more the first 10 ms of work run at a quarter speed (30 ms lost). */
  const stepCurve = (loss: (workUs: number) => number): PlanCosts['ramp'][number]['curve'] =>
    [1000, 2000, 3000, 5000, 8000, 13_000, 20_000, 30_000].map((workUs) => {
      const l = loss(workUs);
      return { workUs, lossUs: { mid: l, low: l * 0.8, high: l * 1.2 } };
    });
  const quarter = (w: number) => 3 * Math.min(w, 10_000);
  const point = (gapUs: number, loss: (w: number) => number) => ({
    gapUs,
    lossUs: { mid: loss(30_000), low: loss(30_000), high: loss(30_000) },
    rampUs: 0,
    startSlowdown: { mid: 0, low: 0, high: 0 },
    unitUs: 1000,
    curve: stepCurve(loss),
  });
  const step: PlanCosts = {
    basis: 'benchmark',
    wake: [],
    ramp: [point(10_000, () => 0), point(20_000, quarter), point(1_000_000, quarter)],
  };
  const flat: PlanCosts = {
    basis: 'benchmark',
    wake: [],
    ramp: [point(10_000, () => 0), point(1_000_000, () => 0)],
  };

  it('reads the loss by the work done, whatever the shape of the ramp', () => {
    // 2.5 ms of work at a quarter speed loses three times itself; beyond 10 ms the whole 30 ms.
    assert.equal(rampLossAt(step, 200_000, 2500, 'mid'), 7500);
    assert.equal(rampLossAt(step, 200_000, 500, 'mid'), 1500);
    assert.equal(rampLossAt(step, 200_000, 50_000, 'mid'), 30_000);
    // After a gap too short for the clock to fall, nothing.
    assert.equal(rampLossAt(step, 10_000, 2500, 'mid'), 0);
  });

  it('a curve that goes down with noise never makes longer work lose less', () => {
    const noisy: PlanCosts = {
      basis: 'benchmark',
      wake: [],
      ramp: [
        {
          ...point(100_000, quarter),
          curve: [
            { workUs: 1000, lossUs: { mid: 800, low: 800, high: 800 } },
            { workUs: 2000, lossUs: { mid: 300, low: 300, high: 300 } },
            { workUs: 3000, lossUs: { mid: -50, low: -50, high: -50 } },
          ],
        },
      ],
    };
    assert.equal(rampLossAt(noisy, 100_000, 2500, 'mid'), 800);
    assert.equal(rampLossAt(noisy, 100_000, 500, 'mid'), 400);
  });

  /** One CPU: `rate` bursts of `workUs` each second after exponential gaps, slowed by `costs`; `blips` more wake-ups without work. */
  const pattern = (rate: number, workUs: number, blips: number, c: PlanCosts): WorkloadObservation => {
    // The busy time observed holds the work and what the clock took from it.
    const gapMean = (1e6 - rate * workUs) / rate;
    const exp = Array.from({ length: 400 }, (_, k) => -Math.log(1 - (k + 0.5) / 400) * gapMean);
    const lost = exp.reduce((t, g) => t + rampLossAt(c, g, workUs, 'mid'), 0) / exp.length;
    const busyShare = (rate * (workUs + lost)) / 1e6;
    const entries = rate + blips;
    const idleUs = 1e6 * (1 - busyShare);
    return {
      source: 'cpuidle',
      since: 'window',
      windowSeconds: 10,
      cpus: 1,
      busyShare,
      busySeconds: busyShare * 10,
      idleEntriesPerSecond: entries,
      meanIdlePeriodUs: idleUs / entries,
      meanBusyPeriodUs: (busyShare * 1e6) / entries,
      workBurstsPerSecond: rate,
      workCoveredShare: 1,
      states: [
        {
          name: 'halt',
          share: 1,
          entriesPerSecond: entries,
          meanPeriodUs: idleUs / entries,
          exitLatencyUs: 1,
          above: 0,
          below: 0,
        },
      ],
      perCpu: [
        {
          cpu: 0,
          busyShare,
          idleEntriesPerSecond: entries,
          meanIdlePeriodUs: idleUs / entries,
          workBurstsPerSecond: rate,
        },
      ],
      perCpuTruncated: false,
    };
  };

  /** A fast ramp: after 20 ms idle or more the first 1 ms of work runs at a quarter speed (3 ms lost), then full. */
  const fastLoss = (w: number) => 3 * Math.min(w, 1000);
  const fast: PlanCosts = {
    basis: 'benchmark',
    wake: [],
    ramp: [point(10_000, () => 0), point(20_000, fastLoss), point(1_000_000, fastLoss)],
  };
  const withoutBursts = (o: WorkloadObservation): WorkloadObservation => ({
    ...o,
    workBurstsPerSecond: null,
    perCpu: o.perCpu.map((c) => ({ ...c, workBurstsPerSecond: null })),
  });

  it('takes the gaps between bursts of work, not between wake-ups, and the work out of the busy time the ramp lengthened', () => {
    // 5 queries of 2.5 ms a second after ~200 ms gaps, 60 timer wake-ups a second besides: about
    // 90% of the gaps are beyond 20 ms, each costing 3 ms (a burst of 2.5 ms raises this clock, so
    // each pays for its own gap): about +110%.
    const o = pattern(5, 2500, 60, fast);
    const e = estimateWorkloadCost(o, fast).estimate!;
    assert.ok(e.rampPercent > 95 && e.rampPercent < 125, `${e.rampPercent}%`);
  });

  it("takes a burst's work from its own processes: other processes' wake-ups, interrupts and kernel work neither lengthen the bursts nor dilute their share", () => {
    // 5 queries of 2.5 ms a second on the fast clock (3 ms lost after a long gap, about +110%), and
    // 20 ms a second of other busy time on the same CPU (timers, interrupts, a background writer).
    const o = pattern(5, 2500, 60, fast);
    const pure = estimateWorkloadCost(o, fast).estimate!;
    const share = o.busyShare!;
    const busier = share + 0.02;
    const withOthers = (burstWorkShare: number, sleeplessWorkShare: number): WorkloadObservation => ({
      ...o,
      busyShare: busier,
      busySeconds: busier * o.windowSeconds,
      meanBusyPeriodUs: (busier * 1e6) / o.idleEntriesPerSecond!,
      perCpu: o.perCpu.map((c) => ({ ...c, busyShare: busier, burstWorkShare, sleeplessWorkShare })),
    });
    // (Within a few points: the other work keeps the CPU busy when a few more queries arrive, and
    // those follow it with no gap.)
    const own = estimateWorkloadCost(withOthers(share / busier, 0), fast).estimate!;
    assert.ok(
      Math.abs(own.addedPercent - pure.addedPercent) < 5,
      `${own.addedPercent}% against ${pure.addedPercent}%`,
    );
    // A process that never slept ran inside the busy periods: counted with the bursts.
    const split = estimateWorkloadCost(withOthers((0.7 * share) / busier, (0.3 * share) / busier), fast)
      .estimate!;
    assert.ok(Math.abs(split.addedPercent - own.addedPercent) < 0.1, `${split.addedPercent}%`);
    // Not knowing which processes ran what, the other busy time is spread over the bursts: each
    // query's work is taken as 6.5 ms, which loses the same 3 ms, and the share falls by half.
    const blind = estimateWorkloadCost(
      { ...withOthers(1, 0), perCpu: withOthers(1, 0).perCpu.map(({ burstWorkShare: _, ...c }) => c) },
      fast,
    ).estimate!;
    assert.ok(
      Math.abs(blind.addedPercent - pure.addedPercent) > 20,
      `${blind.addedPercent}% against ${pure.addedPercent}%`,
    );
  });

  it('takes the work on the same base as the ramp: the busy share, however far busySeconds over the window falls behind it', () => {
    const o = pattern(5, 2500, 60, fast);
    const e = estimateWorkloadCost(o, fast).estimate!;
    // The CPU's counters behind the clock: a tenth less busy time over the same window.
    const behind = estimateWorkloadCost({ ...o, busySeconds: (o.busySeconds ?? 0) * 0.9 }, fast).estimate!;
    assert.equal(behind.addedPercent, e.addedPercent);
  });

  it('a burst past the ramp raises the clock by itself, and queries that queued behind another follow it with no gap', () => {
    // 25 queries of 15 ms a second on the step clock (up after 10 ms of work, its loss 30 ms).
    // Poisson arrivals see time averages: the share of queries that find the CPU busy is its busy
    // share b, and they lose nothing. The bursts counted are the work's wake-ups, half of the
    // queued queries among them in the middle: a share b / (2 - b) of the bursts follow the one
    // before with no gap, the others come after an idle period of the idle time over them, and
    // each pays for its own gap only (a burst past the ramp ends it): 30 ms x that share x the
    // chance of a gap past 20 ms (all of the fall) to past 10 ms (the first of it), out of the work
    // a burst holds, its busy period less that.
    const o = pattern(25, 15_000, 0, step);
    const e = estimateWorkloadCost(o, step).estimate!;
    const busy = o.busyShare!;
    const period = busy * 40;
    const share = (queued: number, chance: (meanMs: number) => number) => {
      const lost = 30 * (1 - queued) * chance(((1 - busy) * 40) / (1 - queued));
      return (100 * lost) / (period - lost);
    };
    const between = (queued: number): [number, number] => [
      share(queued, (m) => Math.exp(-20 / m)),
      share(queued, (m) => Math.exp(-10 / m)),
    ];
    const [low, high] = between(busy / (2 - busy));
    assert.ok(e.rampPercent > low && e.rampPercent < high, `${e.rampPercent}% not in ${low}-${high}%`);
    // The range takes all of the queued queries counted (each burst a query: the arrivals' mean gap,
    // 40 ms) and none (every burst after a gap of the idle time over all of them, 25 ms, fewer
    // falling): the middle between.
    assert.ok(e.high >= between(busy)[0], `${e.high}% below ${between(busy)[0]}%`);
    assert.ok(e.low < e.addedPercent && e.addedPercent < e.high, `${e.addedPercent}% (${e.low}-${e.high})`);
  });

  it('carries the clock from burst to burst: short bursts that never finish the ramp keep it low through short gaps', () => {
    // 40 queries of 2.5 ms a second (gaps of ~22 ms, about 40% beyond 20 ms). The step clock needs
    // 40 ms of busy time to come up (10 ms of work at a quarter speed): once a long gap has let it
    // fall, the queries run at a quarter speed, +300%, until their time and the short waits
    // between them add up to that, three queries or so, and a long gap mostly comes first. The fast
    // clock comes up within most queries: mostly the queries after a long gap pay, 3 ms each (gaps
    // of 10-20 ms partly, the clock half down).
    const slowUp = estimateWorkloadCost(pattern(40, 2500, 0, step), step).estimate!;
    assert.ok(slowUp.rampPercent > 230 && slowUp.rampPercent < 280, `${slowUp.rampPercent}%`);
    const fastUp = estimateWorkloadCost(pattern(40, 2500, 0, fast), fast).estimate!;
    assert.ok(fastUp.rampPercent > 40 && fastUp.rampPercent < 90, `${fastUp.rampPercent}%`);
    // At 200 bursts a second of 2.5 ms (gaps of ~2.5 ms, hardly one beyond 20 ms) even the step clock stays up.
    const busy = estimateWorkloadCost(pattern(200, 2500, 0, step), step).estimate!;
    assert.ok(busy.rampPercent < slowUp.rampPercent, `${busy.rampPercent}%`);
    // The range's low end (the step clock losing a fifth less, so up in 34 ms) stays far above
    // what the fast clock costs at its middle.
    assert.ok(slowUp.low > 150 && slowUp.low > 2 * fastUp.rampPercent, `low ${slowUp.low}%`);
    // Where the work's bursts are not known, no state is carried.
    const byWakeups = estimateWorkloadCost(withoutBursts(pattern(40, 2500, 0, step)), step).estimate!;
    assert.ok(byWakeups.rampPercent < slowUp.rampPercent / 1.5, `${byWakeups.rampPercent}% by wake-ups`);
  });

  it('leaves out what still ramps under a performance plan (the platform) and says how much it is', () => {
    const o = pattern(5, 2500, 60, step);
    const alone = estimateWorkloadCost(o, step).estimate!;
    const floored = estimateWorkloadCost(o, step, flat).estimate!;
    assert.equal(floored.addedPercent, alone.addedPercent);
    assert.equal(floored.platformPercent, 0);
    // Under the performance plan itself (its own benchmark as the floor) the ramp is all the platform's.
    const own = estimateWorkloadCost(o, step, step).estimate!;
    assert.equal(own.rampPercent, 0);
    assert.equal(own.platformPercent, alone.rampPercent);
    assert.equal(own.recoverablePercent, 0);
    // Its noise is the same measurement on both sides: the range does not open on it, as it does
    // between two benchmarks that measured alike (their ends taken opposite).
    const twin = estimateWorkloadCost(o, step, { ...step, benchmarkId: 'bm-20260101-000000-fedcba' })
      .estimate!;
    assert.equal(twin.addedPercent, own.addedPercent);
    assert.ok(own.high - own.low < 1, `${own.low}-${own.high}`);
    assert.ok(twin.high - twin.low > 10 * (own.high - own.low), `${twin.low}-${twin.high}`);
    // A platform that loses half of what the plan does: about half the ramp is the plan's (not
    // exactly: a clock that loses half as much comes up in less time, and queries climb the ramp
    // with their time), and the two parts add up to the whole.
    const half: PlanCosts = {
      basis: 'benchmark',
      wake: [],
      ramp: [
        point(10_000, () => 0),
        point(20_000, (w) => quarter(w) / 2),
        point(1_000_000, (w) => quarter(w) / 2),
      ],
    };
    const shared = estimateWorkloadCost(o, step, half).estimate!;
    assert.ok(
      Math.abs(shared.rampPercent - alone.rampPercent / 2) <= alone.rampPercent / 50,
      `${shared.rampPercent} of ${alone.rampPercent}`,
    );
    assert.ok(
      Math.abs(shared.rampPercent + shared.platformPercent! - alone.rampPercent) <= 0.2,
      `${shared.rampPercent} + ${shared.platformPercent} of ${alone.rampPercent}`,
    );
    assert.ok(shared.low <= shared.addedPercent && shared.addedPercent <= shared.high);
  });

  it('short work: the request stream where a clock that short bursts never raise costs more than the bursts after idle say, and the bursts after idle beyond it', () => {
    // The bursts after idle see nothing in the first 3 ms (each follows a long burst that left the
    // clock up); a stream of 2 ms requests after 50 ms gaps loses 4 ms each.
    const late: PlanCosts = {
      basis: 'benchmark',
      wake: [],
      ramp: [point(10_000, () => 0), point(1_000_000, (w) => 3 * Math.max(0, Math.min(w, 10_000) - 3000))],
      stream: [{ gapUs: 50_000, points: [{ workUs: 2000, lossUs: { mid: 4000, low: 3000, high: 5000 } }] }],
    };
    assert.equal(rampLossAt(late, 50_000, 2000, 'mid'), 4000);
    assert.equal(rampLossAt(late, 50_000, 1000, 'mid'), 2000);
    // Below the stream's gap the loss shrinks with the gap, above it stays.
    assert.equal(rampLossAt(late, 25_000, 2000, 'mid'), 2000);
    assert.equal(rampLossAt(late, 500_000, 2000, 'mid'), 4000);
    // Longer work: the stream's largest request's loss, and what the bursts after idle add from
    // that much work on (0 up to 3 ms, 3 ms lost per ms after).
    assert.equal(rampLossAt(late, 1_000_000, 8000, 'mid'), 4000 + 15_000);
    assert.equal(rampLossAt(late, 1_000_000, 4000, 'mid'), 4000 + 3000);
    const withoutStream = { ...late, stream: [] };
    assert.equal(rampLossAt(withoutStream, 50_000, 2000, 'mid'), 0);
  });

  it('short work: the request stream counts where it measured, also below what the bursts after idle lost', () => {
    // Each burst after idle follows a long burst and loses 3 ms per ms of work; requests like the
    // work's own, one after another after the same 200 ms gap, lost 1.5 ms per ms (3 ms for 2 ms).
    const steep: PlanCosts = {
      basis: 'benchmark',
      wake: [],
      ramp: [point(10_000, () => 0), point(1_000_000, (w) => 3 * Math.min(w, 20_000))],
      stream: [{ gapUs: 200_000, points: [{ workUs: 2000, lossUs: { mid: 3000, low: 2000, high: 4000 } }] }],
    };
    assert.equal(rampLossAt(steep, 200_000, 2000, 'mid'), 3000);
    assert.equal(rampLossAt(steep, 200_000, 1000, 'mid'), 1500);
    // Beyond the stream's largest request, the bursts after idle's growth from there: 3 ms per ms.
    const beyond = rampLossAt(steep, 1_000_000, 5000, 'mid');
    assert.equal(beyond, 3000 + (15_000 - 6000));
    // The loss after a whole fall, read for many amounts at once, says the same.
    const fall = lossesAfterLongestGap(steep, Float64Array.of(1000, 2000, 5000), 'mid');
    assert.deepEqual([...fall], [1500, 3000, 12_000]);
    // Without the stream, the bursts after idle alone.
    assert.equal(rampLossAt({ ...steep, stream: [] }, 1_000_000, 2000, 'mid'), 6000);
  });

  it('no plan effect, no estimate beyond the wake-ups: a flat clock costs nothing however long the gaps', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 4, max: 50, noNaN: true }),
        fc.double({ min: 5000, max: 15_000, noNaN: true }),
        (rate, work) => {
          const e = estimateWorkloadCost(pattern(rate, work, 30, flat), flat).estimate!;
          assert.equal(e.rampPercent, 0);
        },
      ),
    );
  });

  it("a query going on with a ramp loses at most what it loses after a whole fall; a unit of one busy period, the curve's piece", () => {
    // A ramp that lets the first millisecond through and then runs at a quarter speed for 19 ms (a
    // quota's shape): its later pieces are steeper than its start.
    const convex = (w: number) => 3 * Math.max(0, Math.min(w, 20_000) - 1000);
    const quota: PlanCosts = {
      basis: 'benchmark',
      wake: [],
      ramp: [point(10_000, () => 0), point(20_000, convex), point(1_000_000, convex)],
    };
    // One gap in ten lets the clock fall; the rest are none.
    const gaps = [
      { gapUs: 0, weight: 0.9 },
      { gapUs: 1_000_000, weight: 0.1 },
    ];
    // Queries of 2.5 ms after idle gaps: each piece of the chain at most L(2.5 ms) = 4.5 ms.
    const query = burstModel(quota, gaps, 'mid', true, 'own')(2500);
    assert.ok(query > 0 && query <= convex(2500) + 1e-6, `${query} us`);
    // Units of 2.5 ms out of longer busy periods lose the curve's pieces, 7.5 ms each after the
    // first: 3.97 ms a unit, where the queries' 2.57 ms is the same chain held to 4.5 ms a piece.
    const unit = burstModel(quota, gaps, 'mid', true, 'units')(2500);
    assert.ok(Math.abs(unit - 3970) < 10 && Math.abs(query - 2570) < 10, `${unit} and ${query} us`);
    // A clock whose ramp is steepest at its start (a real one) is not touched by the bound.
    const concave = (w: number) => 3 * Math.min(w, 1000);
    const clock: PlanCosts = { ...quota, ramp: [point(10_000, () => 0), point(1_000_000, concave)] };
    const a = burstModel(clock, gaps, 'mid', true, 'own')(2500);
    const b = burstModel(clock, gaps, 'mid', true, 'units')(2500);
    assert.ok(Math.abs(a - b) < 1e-6, `${a} against ${b}`);
  });

  it('queries climb the ramp with their time and the waits between them too short to let the clock fall; units with their work', () => {
    // The step clock (40 ms of busy time to come up); one gap in ten lets it fall, the others are
    // too short to (10 ms gaps lose nothing on it). Queries of 2.5 ms: 7.5 ms lost after a fall.
    const queries = (shortGapUs: number, follow: 'own' | 'units') =>
      burstModel(
        step,
        [
          { gapUs: shortGapUs, weight: 0.9 },
          { gapUs: 1_000_000, weight: 0.1 },
        ],
        'mid',
        true,
        follow,
      )(2500);
    // The curve read between its points (8 and 13 ms of work) takes the clock's last 2 ms of climb
    // as a slope: L(5, 7.5, 10, 12.5 ms) = 15, 22.5, 26.4, 29.4 ms. Back to back, the chain is the
    // work's: the queries after a fall start 2.5, 5, 7.5, ... ms up the ramp and lose 7.5, 7.5, 3.9,
    // 3.0 and 0.6 ms: 0.75 ms a query for the falls, 1.80 for the chains.
    assert.ok(Math.abs(queries(0, 'own') - 2549) < 5, `${queries(0, 'own')} us`);
    // 10 ms apart, the second query after a fall starts 20 ms into the ramp (the first query's 10
    // ms and the wait), 5 ms of work up it, and loses 7.5 ms; the third starts 40 ms in, 11.6 ms
    // of work up, and loses 1.7 ms; the fourth finds the clock up: 0.75 + 0.1 x (0.9 x 7.5 +
    // 0.81 x 1.7) ms.
    assert.ok(Math.abs(queries(10_000, 'own') - 1561) < 5, `${queries(10_000, 'own')} us`);
    // Units of one busy period follow each other with no wait between them: the gaps drawn for
    // them spread the waits of the busy periods over every unit, and credit nothing.
    assert.equal(queries(10_000, 'units'), queries(0, 'units'));
  });

  it("units take a fall's share from the whole ramp: 1 ms units that lose nothing after a fall still pay their busy period's ramp", () => {
    // A ramp that lets the first millisecond of a burst through, then runs 4 ms at half speed and
    // eases off (L(1, 2, 3, 5, 8 ms) = 0, 1, 2, 4, 5 ms): a 1 ms unit after a whole fall loses
    // nothing, so the share of a fall read at its own work is 0 / 0.
    const late = (w: number) => (w <= 5000 ? Math.max(w - 1000, 0) : Math.min(4000 + (w - 5000) / 3, 5000));
    const costs: PlanCosts = { ...step, ramp: [point(10_000, () => 0), point(1_000_000, late)] };
    // One unit in five comes after a gap that lets the clock fall; the rest follow with none.
    const gaps = [
      { gapUs: 0, weight: 0.8 },
      { gapUs: 1_000_000, weight: 0.2 },
    ];
    // A fifth of a chance of a fall a unit, read on the whole ramp: the k-th unit after one loses
    // the ramp's piece from k to k + 1 ms, 1 ms for k = 1..4 and a third for k = 5..7, with chance
    // 0.2 x 0.8^k: 0.2 x (2361.6 + 266.3) = 526 us a unit.
    const unit = burstModel(costs, gaps, 'mid', true, 'units')(1000);
    assert.ok(Math.abs(unit - 526) < 10, `${unit} us`);
    // A query of 1 ms after a wait loses at most what it loses after a whole fall: nothing.
    assert.equal(burstModel(costs, gaps, 'mid', true, 'own')(1000), 0);
  });

  it("a fall's share read on the whole ramp: a clock a tenth of the way down carries a hundredth of a whole fall, a tenth of the bursts meeting a whole one a tenth", () => {
    // After a whole fall the clock runs work at a quarter of its speed for 20 ms of work (a loss of
    // 3 ms per ms, 60 ms in all).
    const whole = (w: number) => 3 * Math.min(w, 20_000);
    // After a 10 ms gap, two clocks alike at a burst's start, a tenth of a whole fall's loss:
    // - one a tenth of the way down, a tenth as slow at its start and up in a tenth of the ramp:
    //   its whole ramp loses a hundredth of a whole fall's;
    // - one that falls only at its checks, a whole fall for a tenth of the bursts after the gap:
    //   a tenth of a whole fall's loss at every amount of work.
    const gradual = (w: number) => 0.3 * Math.min(w, 2000);
    const sampled = (w: number) => whole(w) / 10;
    const chain = (after10ms: (w: number) => number) => {
      const costs: PlanCosts = { ...step, ramp: [point(10_000, after10ms), point(1_000_000, whole)] };
      const model = burstModel(costs, [{ gapUs: 10_000, weight: 1 }], 'mid', true, 'own');
      // What a 2.5 ms query carries beyond its own loss after the gap.
      return model(2500) - after10ms(2500);
    };
    const [fromGradual, fromSampled] = [chain(gradual), chain(sampled)];
    // At most a hundredth of the whole fall's 60 ms, and something: the bursts after the gap go on
    // with the ramp the gap left.
    assert.ok(fromGradual > 0 && fromGradual <= 600, `${fromGradual} us`);
    // A tenth of a chance of a whole fall: at most a tenth of its 60 ms, and many times what the
    // gradual clock carries (read at the burst's own work and squared, the two came out alike).
    assert.ok(
      fromSampled <= 6000 && fromSampled > 5 * fromGradual,
      `${fromSampled} us against ${fromGradual} us`,
    );
  });

  it('work counted in units: a unit after a gap too short for the clock to fall goes on with the ramp the unit before was on', () => {
    // A clock that notices work late: after 20 ms idle or more the first 1 ms of work runs at full
    // speed, the next 5 ms at half speed (5 ms lost), then full.
    const lateLoss = (w: number) => Math.min(Math.max(w - 1000, 0), 5000);
    const late: PlanCosts = {
      basis: 'benchmark',
      wake: [],
      ramp: [point(10_000, () => 0), point(20_000, lateLoss), point(1_000_000, lateLoss)],
    };
    // 16 busy periods a second of 6 ms of work each after ~50 ms, as their own bursts (a query each).
    const chunks = pattern(16, 6000, 0, late);
    const own = estimateWorkloadCost(chunks, late).estimate!;
    // The same busy and idle time counted as 96 units of 1 ms (a client and a server handing the
    // work back and forth in shorter turns): gaps of 8-9 ms on average between the units.
    const counted = (inUnits: boolean): WorkloadObservation => ({
      ...chunks,
      workBurstsPerSecond: 96,
      perCpu: chunks.perCpu.map((c) => ({ ...c, workBurstsPerSecond: 96, workInUnits: inUnits })),
    });
    const alone = estimateWorkloadCost(counted(false), late).estimate!;
    const chained = estimateWorkloadCost(counted(true), late).estimate!;
    // Each unit priced on its own after its gap: 1 ms of work loses nothing on this clock.
    // Each unit priced on its own after its gap pays what its 1.5 ms or so loses at a ramp's start
    // (the first 1 ms free on this clock): well under half of what the 6 ms bursts pay.
    assert.ok(alone.rampPercent < own.rampPercent / 2, `alone ${alone.rampPercent}% own ${own.rampPercent}%`);
    // Chained, the units after a fall go on up the ramp and pay for it: about what the 6 ms bursts
    // pay (the exponential gaps between units let the clock fall inside a busy period now and then,
    // and a chain may run past a busy period's end).
    assert.ok(
      Math.abs(chained.rampPercent - own.rampPercent) < own.rampPercent * 0.2,
      `chained ${chained.rampPercent}% own ${own.rampPercent}%`,
    );
    // The range still holds the middle, and with no clock effect no unit pays anything.
    assert.ok(chained.low <= chained.addedPercent && chained.addedPercent <= chained.high);
    assert.equal(estimateWorkloadCost(counted(true), flat).estimate!.rampPercent, 0);
  });

  it('the loss after a whole fall read for many amounts of work at once is what lossesAtGaps holds at its longest gap', () => {
    const curve = fc.array(
      fc.record({
        workUs: fc.integer({ min: 1, max: 60_000 }),
        loss: fc.integer({ min: -500, max: 40_000 }),
      }),
      { minLength: 1, maxLength: 12 },
    );
    fc.assert(
      fc.property(
        fc.array(curve, { minLength: 1, maxLength: 6 }),
        fc.array(curve, { maxLength: 4 }),
        (ladder, stream) => {
          const sorted = (c: { workUs: number; loss: number }[]) =>
            [...c]
              .sort((a, b) => a.workUs - b.workUs)
              .map((p) => ({ workUs: p.workUs, lossUs: { mid: p.loss, low: p.loss, high: p.loss } }));
          const c: PlanCosts = {
            basis: 'benchmark',
            wake: [],
            ramp: ladder.map((points, i) => ({ ...point(10_000 * (i + 1), () => 0), curve: sorted(points) })),
            stream: stream.map((points, i) => ({ gapUs: 5000 * (i + 1), points: sorted(points) })),
          };
          const works = Float64Array.from({ length: 40 }, (_, i) => i * 1700);
          const all = lossesAfterLongestGap(c, works, 'mid');
          works.forEach((w, j) => {
            const at = lossesAtGaps(c, w, 'mid');
            const expected =
              Math.max(0, at.ladder[at.ladder.length - 1] ?? 0) +
              Math.max(0, at.stream[at.stream.length - 1] ?? 0);
            assert.ok(
              Math.abs(all[j]! - expected) <= 1e-6 * Math.max(1, expected),
              `${w}: ${all[j]} against ${expected}`,
            );
          });
        },
      ),
      // Two stream points at the same work (the second larger): read at that work and beyond it.
      {
        examples: [
          [
            [[{ workUs: 1, loss: 0 }]],
            [
              [
                { workUs: 59_998, loss: 0 },
                { workUs: 59_998, loss: 1 },
              ],
            ],
          ],
        ],
      },
    );
  });

  it('the work found in a slowed busy period never exceeds it, and the share stays finite', () => {
    fc.assert(
      // At least 2% busy over 10 s (an estimate at all), at most 80% with the loss.
      fc.property(
        fc.double({ min: 4, max: 20, noNaN: true }),
        fc.double({ min: 5000, max: 10_000, noNaN: true }),
        (rate, work) => {
          const e = estimateWorkloadCost(pattern(rate, work, 10, step), step).estimate!;
          assert.ok(Number.isFinite(e.addedPercent) && e.addedPercent >= 0);
          // At most three times the work (the clock at a quarter speed).
          assert.ok(e.rampPercent <= 300 + 1e-6, `${e.rampPercent}%`);
        },
      ),
    );
  });
});
