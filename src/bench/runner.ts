/**
 * Runs the benchmark phases in worker threads and returns the raw timings. The calling thread only
 * posts messages and awaits answers, so a server's event loop keeps serving during a run. Every
 * exit path (success, error, cancellation, hard cap) terminates all workers and waits for them
 * to be gone before settling.
 */
import { Worker } from 'node:worker_threads';
import { PowerPlanError } from '../domain/errors.ts';
import type { RawRun } from './analysis.ts';
import { type BenchPlan, warmSlices } from './profiles.ts';
import { CONTROL_WORDS, START_SLOT, workerSource } from './worker-source.ts';

export interface RunProgress {
  progress: number;
  total: number;
  message: string;
}

export interface RunHooks {
  signal?: AbortSignal;
  progress?: (p: RunProgress) => void;
  /** Hard cap (ms): the run is stopped with `timeout` when it is reached. */
  capMs: number;
}

let live = 0;
/** Benchmark worker threads alive in this process right now (0 whenever no run is in progress). */
export const liveWorkers = (): number => live;

type Answer = Record<string, unknown> & { seq: number; ok: boolean; error?: string };

/** One worker thread with request/answer messaging; a request fails if the worker dies. */
class BenchWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();
  private seq = 0;
  private readyWaiter: (() => void) | undefined;
  readonly exited: Promise<void>;

  constructor(control: SharedArrayBuffer, index: number) {
    this.worker = new Worker(workerSource, { eval: true, workerData: { control, index } });
    live++;
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        live--;
        for (const p of this.pending.values()) p.reject(new Error(`benchmark worker exited (code ${code})`));
        this.pending.clear();
        resolve();
      });
    });
    this.worker.on('error', (e) => {
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    });
    this.worker.on('message', (m: Answer & { ready?: boolean }) => {
      if (m.ready) {
        this.readyWaiter?.();
        return;
      }
      const p = this.pending.get(m.seq);
      if (!p) return;
      this.pending.delete(m.seq);
      if (m.ok) p.resolve(m);
      else p.reject(new Error(`benchmark worker failed: ${m.error}`));
    });
  }

  request<T>(cmd: string, args: Record<string, unknown>): Promise<T> {
    const seq = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as (a: Answer) => void, reject });
      this.worker.postMessage({ seq, cmd, ...args });
    });
  }

  /** Resolves when the worker has posted `ready` (all-core workers do before waiting for the start). */
  ready(): Promise<void> {
    return new Promise((resolve) => {
      this.readyWaiter = resolve;
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
    await this.exited;
  }
}

interface SustainAnswer {
  units: number;
  elapsedMs: number;
  slices: number[];
}

/** Kernel iterations of the wake-up probe's small unit (about `unitUs` on the warm core). */
export const wakeIterations = (iterations: number, unitMs: number, unitUs: number): number =>
  Math.max(100, Math.round((iterations * unitUs) / 1000 / Math.max(unitMs, 0.001)));

export const runBenchmark = async (plan: BenchPlan, hooks: RunHooks): Promise<RawRun> => {
  const control = new SharedArrayBuffer(CONTROL_WORDS * Int32Array.BYTES_PER_ELEMENT);
  const flags = new Int32Array(control);
  const workers: BenchWorker[] = [];
  const spawn = () => {
    const w = new BenchWorker(control, workers.length);
    workers.push(w);
    return w;
  };

  // Whatever stops the run first (caller's signal or the cap) terminates the workers; the pending
  // request then fails and the catch below answers with that reason rather than "worker exited".
  let stopReason: unknown;
  const stop = (reason: unknown) => {
    if (stopReason !== undefined) return;
    stopReason = reason;
    for (const w of workers) void w.terminate();
  };
  const onAbort = () =>
    stop(
      hooks.signal?.reason instanceof PowerPlanError
        ? hooks.signal.reason
        : new PowerPlanError('cancelled', 'The benchmark was cancelled; no worker is left running.'),
    );
  const timer = setTimeout(
    () =>
      stop(
        new PowerPlanError(
          'timeout',
          `The benchmark did not finish within its cap of ${hooks.capMs} ms and was stopped; the machine may be heavily loaded.`,
        ),
      ),
    hooks.capMs,
  );
  hooks.signal?.addEventListener('abort', onAbort, { once: true });
  if (hooks.signal?.aborted) onAbort();

  const slice = warmSlices(plan);
  // Calibration, the warm slices, the ladder, the stream's sizes, the wake-up probe, both sustained.
  const total = 4 + slice.slices + plan.idleGapsMs.length * plan.repetitions + plan.streamUnits.length;
  let step = 0;
  const progress = (message: string) => {
    if (stopReason === undefined) hooks.progress?.({ progress: step++, total, message });
  };
  const guard = <T>(p: Promise<T>): Promise<T> => {
    if (stopReason !== undefined) {
      p.catch(() => undefined); // the request dies with its worker; the stop reason is the answer
      throw stopReason;
    }
    return p;
  };

  try {
    const main = spawn();
    progress('calibrating the unit of work');
    const cal = await guard(
      main.request<{ iterations: number; unitMs: number; checksum: number }>('calibrate', {
        spinMs: plan.calibrateSpinMs,
        targetMs: 1,
      }),
    );
    const iterations = cal.iterations;

    // The warm reference in slices across the run (warmSlices): before each run of the ladder and
    // after the request stream.
    const warmBursts: number[][] = [];
    const warm = async (at: number) => {
      progress(`warm baseline (${at}/${slice.slices})`);
      const w = await guard(
        main.request<{ bursts: number[][] }>('warm', {
          spinMs: plan.warmSpinMs,
          iterations,
          units: plan.burstUnits,
          count: slice.bursts,
        }),
      );
      warmBursts.push(...w.bursts);
    };

    const idle: RawRun['idle'] = [];
    for (let rep = 0; rep < plan.repetitions; rep++) {
      await warm(rep + 1);
      for (const gapMs of plan.idleGapsMs) {
        progress(`burst after ${gapMs} ms idle (${rep + 1}/${plan.repetitions})`);
        const b = await guard(
          main.request<{ times: number[] }>('burst', { idleMs: gapMs, iterations, units: plan.burstUnits }),
        );
        idle.push({ gapMs, times: b.times });
      }
    }

    const stream: NonNullable<RawRun['stream']> = [];
    for (const units of plan.streamUnits) {
      progress(`requests of ${units} unit(s) after ${plan.streamGapsMs.join(', ')} ms idle`);
      for (const gapMs of plan.streamGapsMs) {
        const r = await guard(
          main.request<{ times: number[] }>('stream', {
            gapMs,
            iterations,
            units,
            count: plan.streamRequests,
            leadMs: plan.streamLeadMs,
          }),
        );
        stream.push({ gapMs, units, times: r.times });
      }
    }
    await warm(slice.slices);

    progress(
      `wake-up after ${plan.wakeGapsUs.length} idle gaps of ${plan.wakeGapsUs[0]}-${plan.wakeGapsUs.at(-1)} us`,
    );
    const wake = await guard(
      main.request<Omit<NonNullable<RawRun['wake']>, 'unitIterations'>>('wake', {
        gapsUs: plan.wakeGapsUs,
        rounds: plan.wakeRounds,
        // The same kernel, sized to the probe's small unit from the calibrated 1 ms unit.
        iterations: wakeIterations(iterations, cal.unitMs, plan.wakeUnitUs),
        warmSpinMs: 30,
      }),
    );

    progress('sustained single-thread');
    const sustainArgs = {
      iterations,
      warmupMs: plan.sustainWarmupMs,
      durationMs: plan.sustainMs,
      sliceMs: plan.sliceMs,
    };
    const single = await guard(main.request<SustainAnswer>('sustain', { ...sustainArgs, together: false }));

    progress(`sustained all-core (${plan.threads} threads)`);
    Atomics.store(flags, START_SLOT, 0);
    const crew = [main];
    for (let i = 1; i < plan.threads; i++) crew.push(spawn());
    const readies = crew.map((w) => w.ready());
    const answers = crew.map((w) => w.request<SustainAnswer>('sustain', { ...sustainArgs, together: true }));
    // A worker that dies before it is ready must fail the run, not leave the others waiting.
    await guard(Promise.race([Promise.all(readies), Promise.all(answers)]));
    Atomics.store(flags, START_SLOT, 1);
    Atomics.notify(flags, START_SLOT);
    const all = await guard(Promise.all(answers));

    return {
      calibration: cal,
      warm: { spinMs: plan.warmSpinMs, bursts: warmBursts },
      idle,
      stream,
      wake: { ...wake, unitIterations: wakeIterations(iterations, cal.unitMs, plan.wakeUnitUs) },
      single: {
        units: single.units,
        elapsedMs: single.elapsedMs,
        sliceMs: plan.sliceMs,
        slices: single.slices,
      },
      allCore: { perWorker: all.map((a) => ({ units: a.units, elapsedMs: a.elapsedMs })) },
    };
  } catch (e) {
    throw stopReason ?? e;
  } finally {
    clearTimeout(timer);
    hooks.signal?.removeEventListener('abort', onAbort);
    await Promise.all(workers.map((w) => w.terminate()));
  }
};

/**
 * The wake-up probe alone (for a comparison with a reference tool such as cyclictest): one worker,
 * a short calibration, then the interleaved gaps. Raw samples in microseconds.
 */
export const runWakeProbe = async (o: {
  gapsUs: number[];
  rounds: number;
  unitUs?: number;
}): Promise<NonNullable<RawRun['wake']>> => {
  const control = new SharedArrayBuffer(CONTROL_WORDS * Int32Array.BYTES_PER_ELEMENT);
  const w = new BenchWorker(control, 0);
  try {
    const cal = await w.request<{ iterations: number; unitMs: number }>('calibrate', {
      spinMs: 50,
      targetMs: 1,
    });
    const unitIterations = wakeIterations(cal.iterations, cal.unitMs, o.unitUs ?? 20);
    const wake = await w.request<Omit<NonNullable<RawRun['wake']>, 'unitIterations'>>('wake', {
      gapsUs: o.gapsUs,
      rounds: o.rounds,
      iterations: unitIterations,
      warmSpinMs: 30,
    });
    return { ...wake, unitIterations };
  } finally {
    await w.terminate();
  }
};
