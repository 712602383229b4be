/**
 * Building blocks for the advice rule tests: Windows and Linux systems as the backends report
 * them, and synthetic benchmark results with a chosen burst penalty.
 */
import type { AdviceInput } from '../../src/advice/input.ts';
import type { BenchmarkResult, Stats } from '../../src/domain/benchmark.ts';
import {
  type ActivePlan,
  emptyProcessorSettings,
  type Plan,
  type ProcessorSettings,
} from '../../src/domain/schemas.ts';
import { planTemplates, SCHEME } from '../../src/platform/windows/well-known.ts';

const both = (v: number) => ({ ac: v, dc: v });

export const win = {
  balanced: { id: SCHEME.balanced, name: 'Balanced', kind: 'balanced', builtin: true },
  high: { id: SCHEME.highPerformance, name: 'High performance', kind: 'high-performance', builtin: true },
  saver: { id: SCHEME.powerSaver, name: 'Power saver', kind: 'power-saver', builtin: true },
  ultimate: {
    id: '5d5f5a4e-1c6b-4a3e-9f8e-0c1d2e3f4a5b',
    name: 'Ultimate Performance',
    kind: 'ultimate-performance',
    builtin: false,
  },
  custom: { id: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', name: 'SQL tuned', kind: 'custom', builtin: false },
} satisfies Record<string, Omit<Plan, 'active'>>;

export const windowsSettings = {
  balanced: (): ProcessorSettings => ({
    ...emptyProcessorSettings(),
    minStatePercent: both(5),
    maxStatePercent: both(100),
    boostMode: both(1),
    epp: both(50),
    coreParkingMinCores: both(10),
  }),
  performance: (): ProcessorSettings => ({
    ...emptyProcessorSettings(),
    minStatePercent: both(100),
    maxStatePercent: both(100),
    boostMode: both(1),
    epp: both(0),
    coreParkingMinCores: both(100),
  }),
};

export const plansWith = (plans: Omit<Plan, 'active'>[], activeId: string): Plan[] =>
  plans.map((p) => ({ ...p, active: p.id === activeId }));

export const activeOf = (
  plans: Plan[],
  processor: ProcessorSettings,
  extra: Partial<ActivePlan> = {},
): ActivePlan => ({
  plan: plans.find((p) => p.active) ?? null,
  processor,
  owner: 'powercfg',
  policyManaged: false,
  canSet: true,
  ...extra,
});

/** A Windows server: the given plans, one of them active with the given settings. */
export const windowsInput = (
  planDefs: Omit<Plan, 'active'>[],
  activeId: string,
  processor: ProcessorSettings,
  extra: Partial<AdviceInput> = {},
  activeExtra: Partial<ActivePlan> = {},
): AdviceInput => {
  const plans = plansWith(planDefs, activeId);
  return {
    workload: 'database',
    system: {
      backend: 'windows',
      virtualization: { detected: false, kind: null },
      powerSource: 'ac',
      capabilities: { listPlans: true, setPlan: true, createPlan: true, processorSettings: true },
      templates: planTemplates(),
    },
    plans,
    active: activeOf(plans, processor, activeExtra),
    ...extra,
  };
};

const stats = (median: number, unit: string, spread = 0.02, n = 6): Stats => ({
  unit,
  n,
  min: median * (1 - 2 * spread),
  p10: median * (1 - spread),
  median,
  p90: median * (1 + spread),
  max: median * (1 + 2 * spread),
  cv: spread,
});

/** A benchmark run whose bursts after the longest idle gap ran `penaltyPercent` slower than warm. */
export const benchmarkResult = (
  penaltyPercent: number,
  opts: { id?: string; noisy?: boolean; activePlan?: ActivePlan | null; singleMops?: number } = {},
): BenchmarkResult => {
  const id = opts.id ?? 'bm-20250101-120000-a1b2c3';
  const warmMs = 30;
  const ratio = 1 + penaltyPercent / 100;
  const noisy = opts.noisy ?? false;
  const gap = (idleGapMs: number, r: number) => ({
    idleGapMs,
    burstMs: stats(warmMs * r, 'ms'),
    penalty: stats(r, 'ratio'),
    penaltyPercent: { value: (r - 1) * 100, unit: '%' },
    firstUnitPenalty: stats(r * 1.5, 'ratio'),
    rampUpMs: stats(10, 'ms'),
    unsettled: 0,
    noisy,
  });
  const single = opts.singleMops ?? 100;
  return {
    id,
    startedAt: new Date().toISOString(),
    finishedAt: new Date().toISOString(),
    durationMs: 3000,
    capMs: 20000,
    profile: 'quick',
    threads: 2,
    idleGapsMs: [50, 1000],
    repetitions: 2,
    forced: false,
    environment: {
      activePlan: opts.activePlan ?? null,
      backend: 'windows',
      virtualization: null,
      os: 'windows 10.0.20348',
      cpu: { model: 'test cpu', logicalCpus: 2 },
      loadBefore: { cpuBusyPercent: 1, maxCpuBusyPercent: 2, loadAverage: [0, 0, 0] },
      node: process.version,
    },
    phases: {
      calibration: { unitIterations: 1000, unitMs: { value: 1, unit: 'ms' }, checksum: 1 },
      warmBaseline: {
        spinMs: { value: 250, unit: 'ms' },
        burstUnits: 30,
        burstMs: stats(warmMs, 'ms'),
        unitMs: stats(1, 'ms'),
        noisy: false,
      },
      burstsAfterIdle: [gap(50, 1 + (ratio - 1) / 3), gap(1000, ratio)],
      sustainedSingle: {
        durationMs: { value: 400, unit: 'ms' },
        throughput: { value: single, unit: 'Mops/s' },
        unitsPerSecond: { value: 1000, unit: 'units/s' },
        slices: stats(single, 'Mops/s'),
        noisy: false,
      },
      sustainedAllCore: {
        threads: 2,
        durationMs: { value: 400, unit: 'ms' },
        throughput: { value: 2 * single, unit: 'Mops/s' },
        perThread: stats(single, 'Mops/s'),
        speedup: { value: 2, unit: 'ratio' },
        scalingEfficiency: { value: 1, unit: 'ratio' },
        noisy: false,
      },
    },
    summary: {
      id,
      startedAt: new Date().toISOString(),
      durationMs: 3000,
      profile: 'quick',
      threads: 2,
      plan: null,
      backend: 'windows',
      singleThreadMops: single,
      allCoreMops: 2 * single,
      burstPenaltyPercent: penaltyPercent,
      noisy,
    },
    warnings: [],
  };
};
