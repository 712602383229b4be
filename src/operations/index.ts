/** The registry: every operation the service offers, in the order surfaces list them. */
import type { Operation } from './define.ts';
import { getActivePowerPlan } from './get-active-power-plan.ts';
import { getAuditLog } from './get-audit-log.ts';
import { getBenchmark } from './get-benchmark.ts';
import { getSystemInfo } from './get-system-info.ts';
import { listBenchmarks } from './list-benchmarks.ts';
import { listPowerPlans } from './list-power-plans.ts';
import { runCpuBenchmark } from './run-cpu-benchmark.ts';
import { setPowerPlan } from './set-power-plan.ts';

export const operations: readonly Operation[] = [
  getSystemInfo,
  listPowerPlans,
  getActivePowerPlan,
  setPowerPlan,
  getAuditLog,
  runCpuBenchmark,
  listBenchmarks,
  getBenchmark,
];

export const operationByName = (name: string): Operation | undefined =>
  operations.find((o) => o.name === name);
