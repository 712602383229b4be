/** A benchmark stand-in for comparison tests: runs can be held at a gate to interrupt a comparison. */
import type { BenchmarkService, RunOptions, RunRequest } from '../../src/bench/service.ts';
import { PowerPlanError } from '../../src/domain/errors.ts';
import { benchmarkResult } from '../advice/scenarios.ts';

/**
 * A benchmark stand-in: runs before `holdFrom` answer at once; later runs wait for `release` (or
 * the abort). Answers are synthetic: the first run pays a 30% burst penalty, the others 1%.
 */
export class GatedBench {
  private readonly holdFrom: number;

  constructor(holdFrom = 2) {
    this.holdFrom = holdFrom;
  }

  runs: { plan: string | undefined; request: RunRequest }[] = [];
  private gates: (() => void)[] = [];
  private started: (() => void)[] = [];
  fail: PowerPlanError | undefined;

  asService(): BenchmarkService {
    return this as unknown as BenchmarkService;
  }

  async run(request: RunRequest, options: RunOptions) {
    const fp = await options.fingerprint();
    this.runs.push({ plan: fp.activePlan?.plan?.id, request });
    for (const s of this.started.splice(0)) s();
    if (this.runs.length < this.holdFrom) return this.answer(fp.activePlan);
    await new Promise<void>((resolve, reject) => {
      this.gates.push(resolve);
      options.signal?.addEventListener(
        'abort',
        () => reject(new PowerPlanError('cancelled', 'The benchmark was cancelled.')),
        {
          once: true,
        },
      );
    });
    if (this.fail) throw this.fail;
    return this.answer(fp.activePlan);
  }

  private answer(activePlan: Awaited<ReturnType<RunOptions['fingerprint']>>['activePlan']) {
    return benchmarkResult(this.runs.length === 1 ? 30 : 1, {
      id: `bm-20250101-120000-00000${this.runs.length}`,
      activePlan,
    });
  }

  /** Resolves when run number `n` (1-based) has started. */
  async started_(n: number) {
    while (this.runs.length < n) await new Promise<void>((r) => this.started.push(r));
  }

  release() {
    for (const g of this.gates.splice(0)) g();
  }
}
