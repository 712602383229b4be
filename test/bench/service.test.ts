import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BenchmarkHistory } from '../../src/bench/history.ts';
import { benchPlan } from '../../src/bench/profiles.ts';
import { liveWorkers, runBenchmark } from '../../src/bench/runner.ts';
import { BenchmarkService, type Fingerprint } from '../../src/bench/service.ts';
import { BenchmarkResult, benchmarkIdPattern } from '../../src/domain/benchmark.ts';
import { Store } from '../../src/lib/store.ts';
import { isCode } from '../support/errors.ts';
import { until } from '../support/until.ts';

const fingerprint = async (): Promise<Fingerprint> => ({
  activePlan: null,
  backend: 'simulated',
  virtualization: { detected: true, kind: 'kvm' },
});
const idle = async () => ({ busyPercent: 1, maxBusyPercent: 2, loadAverage: [0, 0, 0] });
/** A short ladder keeps each real run near 2 s; one test runs the full quick profile. */
const short = { idleGapsMs: [20, 100] };

describe('benchmark service (real runs)', () => {
  let dir: string;
  let store: Store;
  let service: BenchmarkService;
  let first: BenchmarkResult;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-bench-'));
    store = new Store(dir);
    service = new BenchmarkService({ store, sampleLoad: idle });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the quick profile with sane figures, within its cap, and stores it', async () => {
    const steps: string[] = [];
    first = await service.run(
      { profile: 'quick' },
      { fingerprint, progress: (p) => steps.push(`${p.progress}/${p.total} ${p.message}`) },
    );
    assert.deepEqual(BenchmarkResult.parse(first), first);
    assert.match(first.id, benchmarkIdPattern);
    assert.equal(first.threads, availableParallelism());
    assert.deepEqual(first.idleGapsMs, [50, 200, 1000]);
    assert.ok(
      first.durationMs > 0 && first.durationMs <= first.capMs,
      `${first.durationMs} of ${first.capMs}`,
    );
    const ph = first.phases;
    assert.ok(ph.calibration.unitIterations > 0);
    assert.ok(ph.sustainedSingle.throughput.value > 0);
    assert.equal(ph.sustainedSingle.throughput.unit, 'Mops/s');
    assert.ok(ph.sustainedAllCore.throughput.value > 0);
    assert.equal(ph.sustainedAllCore.threads, first.threads);
    // How well the threads scale is a timing (perf:quality measures it); here only that the
    // figures are derived from each other as documented, whatever else the machine is running.
    const all = ph.sustainedAllCore;
    assert.ok(
      Math.abs(all.speedup.value - all.throughput.value / ph.sustainedSingle.throughput.value) <
        0.01 * all.speedup.value + 0.002,
      `speedup ${all.speedup.value} vs ${all.throughput.value} / ${ph.sustainedSingle.throughput.value}`,
    );
    assert.ok(Math.abs(all.scalingEfficiency.value - all.speedup.value / all.threads) < 0.002);
    assert.equal(ph.burstsAfterIdle.length, 3);
    for (const g of ph.burstsAfterIdle) {
      assert.equal(g.burstMs.n, 2);
      assert.ok(g.penalty.median > 0 && g.burstMs.median > 0);
    }
    assert.equal(first.environment.backend, 'simulated');
    assert.equal(first.environment.node, process.version);
    assert.ok(first.warnings.some((w) => w.includes('virtual machine')));
    const wake = ph.wakeUp!;
    assert.deepEqual(
      wake.gaps.map((g) => g.gapUs),
      [100, 200, 500, 1000, 2000, 5000, 10000],
    );
    for (const g of wake.gaps) {
      assert.equal(g.overshootUs.n, wake.rounds);
      assert.ok(g.overshootUs.p50 <= g.overshootUs.p99 && g.overshootUs.p99 <= g.overshootUs.max);
      assert.ok(g.firstUnitSlowdown.p50 > 0 && g.costUs.p50 >= 0);
    }
    assert.equal(first.summary.wakeUpUs !== undefined, true);
    assert.match(
      first.summary.headline ?? '',
      /^wake-up: \+[\d.]+ us per request; ramp: [+-][\d.]+% for [\d.]+ ms/,
    );
    // The request stream: its sizes after its gaps, each request timed but the stream's first.
    const stream = first.phases.requestStream ?? [];
    assert.ok(stream.length > 0, 'a request stream was timed');
    for (const p of stream) {
      assert.equal(p.n, 5);
      assert.ok(p.sdLossMs >= 0 && Number.isFinite(p.meanLossMs) && p.meanLossMs > -p.units);
    }
    assert.equal(steps.length, 14);
    assert.match(steps[0]!, /^0\/14 calibrating/);
    // The warm reference timed in slices across the run: before each run of the ladder and after
    // the request stream, two bursts each.
    const at = (text: string) => steps.findIndex((m) => m.includes(text));
    assert.ok(at('warm baseline (1/3)') < at('1000 ms idle (1/2)'));
    assert.ok(at('1000 ms idle (1/2)') < at('warm baseline (2/3)'));
    assert.ok(at('warm baseline (2/3)') < at('50 ms idle (2/2)'));
    assert.ok(at('requests of') < at('warm baseline (3/3)') && at('warm baseline (3/3)') < at('wake-up'));
    assert.equal(ph.warmBaseline.burstMs.n, 6);
    assert.equal(ph.warmBaseline.unitMs.n, 6 * ph.warmBaseline.burstUnits);
    assert.equal(service.activeWorkers, 0);
    assert.equal(existsSync(join(dir, 'benchmark.lock')), false);
    assert.equal((await service.get(first.id)).id, first.id);
  });

  it('answers busy to a second run while one is in progress, in-process and across processes', async () => {
    const running = service.run({ ...short, threads: 1 }, { fingerprint });
    await assert.rejects(service.run({ ...short }, { fingerprint }), isCode('busy'));
    // A second instance over the same state directory stands for the CLI beside the server; it
    // asks once the first run holds the host lock (taking it is asynchronous).
    await until('the first run to hold the host lock', () => existsSync(join(dir, 'benchmark.lock')));
    const other = new BenchmarkService({ store: new Store(dir), sampleLoad: idle });
    await assert.rejects(other.run({ ...short }, { fingerprint }), isCode('busy'));
    await running;
    assert.equal(service.running, false);
  });

  it('refuses with busy when the CPU is already loaded, unless forced', async () => {
    const loaded = async () => ({ busyPercent: 85, maxBusyPercent: 100, loadAverage: [2, 2, 2] });
    const guarded = new BenchmarkService({ store, sampleLoad: loaded });
    await assert.rejects(guarded.run({ ...short }, { fingerprint }), (e) => {
      isCode('busy')(e);
      assert.match((e as Error).message, /85% busy.*force/);
      return true;
    });
    const forced = await guarded.run({ ...short, threads: 1, force: true }, { fingerprint });
    assert.equal(forced.forced, true);
    assert.equal(forced.environment.loadBefore.cpuBusyPercent, 85);
    assert.ok(forced.warnings.some((w) => /85% busy before the run \(forced\)/.test(w)));
  });

  it('stops every worker when cancelled mid-run, and can run again afterwards', async () => {
    const controller = new AbortController();
    let sawAllCore = false;
    const run = service.run(
      { ...short, threads: 3 },
      {
        fingerprint,
        signal: controller.signal,
        progress: (p) => {
          if (p.message.startsWith('sustained all-core')) sawAllCore = true;
        },
      },
    );
    // Abort once the three all-core workers exist (polled on the event loop, not guessed with a sleep).
    await new Promise<void>((resolve) => {
      const poll = () => (sawAllCore && liveWorkers() === 3 ? resolve() : setImmediate(poll));
      poll();
    });
    controller.abort();
    await assert.rejects(run, isCode('cancelled'));
    assert.equal(service.activeWorkers, 0);
    assert.equal(service.running, false);
    assert.equal(existsSync(join(dir, 'benchmark.lock')), false);
    const again = await service.run({ ...short, threads: 1 }, { fingerprint });
    assert.match(again.id, benchmarkIdPattern);
  });

  it('stops a run at its hard cap with timeout and leaves no worker', async () => {
    await assert.rejects(runBenchmark(benchPlan('quick', 2), { capMs: 300 }), isCode('timeout'));
    assert.equal(liveWorkers(), 0);
  });

  it('cancels a run when the service shuts down', async () => {
    const shutdown = new AbortController();
    const s = new BenchmarkService({ store, sampleLoad: idle, shutdown: shutdown.signal });
    const run = s.run({ ...short }, { fingerprint, progress: () => shutdown.abort() });
    await assert.rejects(run, isCode('cancelled'));
    assert.equal(liveWorkers(), 0);
    await assert.rejects(s.run({ ...short }, { fingerprint }), isCode('busy'));
  });

  it('keeps the history across a restart, newest first, and answers not_found for unknown ids', async () => {
    const restarted = new BenchmarkService({ store: new Store(dir), sampleLoad: idle });
    const list = await restarted.list();
    assert.equal(list.total, 4);
    assert.equal(list.benchmarks.at(-1)?.id, first.id);
    assert.deepEqual((await restarted.list(2)).benchmarks.length, 2);
    assert.deepEqual(await restarted.get(first.id), first);
    await assert.rejects(restarted.get('bm-20000101-000000-000000'), isCode('not_found'));
    await assert.rejects(restarted.get('../../etc/passwd'), isCode('not_found'));
  });

  it('bounds the history by count and by size, dropping the oldest', async () => {
    const many = (n: number) =>
      Array.from({ length: n }, (_, i) => {
        const id = `bm-20250101-0000${String(i).padStart(2, '0')}-abcdef`;
        return { ...first, id, summary: { ...first.summary, id } };
      });
    const byCount = new BenchmarkHistory(new Store(join(dir, 'count')), { count: 3 });
    for (const r of many(5)) await byCount.add(r);
    assert.deepEqual(
      (await byCount.all()).map((r) => r.id.slice(-9, -7)),
      ['04', '03', '02'],
    );
    const oneSize = Buffer.byteLength(JSON.stringify(first, null, 2));
    const bySize = new BenchmarkHistory(new Store(join(dir, 'size')), { bytes: Math.round(2.5 * oneSize) });
    for (const r of many(5)) await bySize.add(r);
    assert.deepEqual(
      (await bySize.all()).map((r) => r.id.slice(-9, -7)),
      ['04', '03'],
    );
  });
});
