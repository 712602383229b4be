/**
 * What the advice rules are given: the system facts a backend reports, the plans, the active plan
 * with its settings and owner, and optionally a benchmark or a comparison, for one workload.
 */
import type { ComparisonEntry, Workload } from '../domain/advice.ts';
import type { BenchmarkResult } from '../domain/benchmark.ts';
import type {
  ActivePlan,
  BackendName,
  Capabilities,
  Plan,
  PlanTemplate,
  PowerSource,
  Virtualization,
} from '../domain/schemas.ts';
import type { WorkloadCost } from '../domain/workload.ts';

export interface SystemFacts {
  backend: BackendName;
  virtualization: Virtualization;
  powerSource: PowerSource;
  capabilities: Capabilities;
  /** The plans the backend can create when missing (empty where none can be). */
  templates: readonly PlanTemplate[];
}

export interface AdviceInput {
  workload: Workload;
  system: SystemFacts;
  plans: readonly Plan[];
  active: ActivePlan;
  /** A benchmark run under the active plan, when one is recent enough to rest on. */
  benchmark?: BenchmarkResult;
  /** The plans of a comparison, measured; the original (the active plan) has `difference: null`. */
  comparison?: readonly ComparisonEntry[];
  /** What the plan costs the work observed on this server (get_workload_cost), when it was read. */
  observed?: Pick<WorkloadCost, 'estimate' | 'summary'>;
  /** Why a stored benchmark was or was not used; becomes `basis.text`. */
  basisNote?: string;
}

/** `database`, `batch` and `latency` want a performance plan; `energy-saving` does not. */
export const isPerformanceWorkload = (input: Pick<AdviceInput, 'workload'>): boolean =>
  input.workload !== 'energy-saving';
