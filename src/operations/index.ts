/** The registry: every operation the service offers, in the order surfaces list them. */
import { comparePowerPlans } from './compare-power-plans.ts';
import type { Operation } from './define.ts';
import { getActivePowerPlan } from './get-active-power-plan.ts';
import { getAuditLog } from './get-audit-log.ts';
import { getBenchmark } from './get-benchmark.ts';
import { getCaller } from './get-caller.ts';
import { getDesiredState } from './get-desired-state.ts';
import { getFleetPrometheusTargets } from './get-fleet-prometheus-targets.ts';
import { getFleetStatus } from './get-fleet-status.ts';
import { getRecommendation } from './get-recommendation.ts';
import { getSystemInfo } from './get-system-info.ts';
import { getWorkloadCost } from './get-workload-cost.ts';
import { holdPowerPlan } from './hold-power-plan.ts';
import { listBenchmarks } from './list-benchmarks.ts';
import { listFleetHosts } from './list-fleet-hosts.ts';
import { listHolds } from './list-holds.ts';
import { listPowerPlans } from './list-power-plans.ts';
import { releasePowerPlan } from './release-power-plan.ts';
import { runCpuBenchmark } from './run-cpu-benchmark.ts';
import { setDesiredPowerPlan } from './set-desired-power-plan.ts';
import { setFleetPowerPlan } from './set-fleet-power-plan.ts';
import { setPowerPlan } from './set-power-plan.ts';

export const operations: readonly Operation[] = [
  getSystemInfo,
  listPowerPlans,
  getActivePowerPlan,
  setPowerPlan,
  holdPowerPlan,
  releasePowerPlan,
  listHolds,
  getDesiredState,
  setDesiredPowerPlan,
  getAuditLog,
  runCpuBenchmark,
  listBenchmarks,
  getBenchmark,
  getRecommendation,
  getWorkloadCost,
  comparePowerPlans,
  getCaller,
  getFleetStatus,
  setFleetPowerPlan,
  listFleetHosts,
  getFleetPrometheusTargets,
];

export const operationByName = (name: string): Operation | undefined =>
  operations.find((o) => o.name === name);
