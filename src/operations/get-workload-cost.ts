/** get_workload_cost: what the power plan costs the work running on this server, observed live and estimated with a range. */
import { z } from 'zod';
import { CPU_LIST_RULE, MAX_CPU, MAX_CPU_LIST_LENGTH, parseCpuList } from '../domain/cpu-list.ts';
import { parseDuration } from '../domain/holds.ts';
import { WorkloadCost } from '../domain/workload.ts';
import { formatWorkloadCost } from '../services/workload-text.ts';
import { defineOperation, readOnly } from './define.ts';

/** Bounds of an observation window: long enough to count, short enough for a request to wait. */
export const MIN_WINDOW_SECONDS = 1;
export const MAX_WINDOW_SECONDS = 300;

const windowInput = z
  .string()
  .max(16)
  .refine(
    (v) => {
      const s = parseDuration(v);
      return s !== undefined && s >= MIN_WINDOW_SECONDS && s <= MAX_WINDOW_SECONDS;
    },
    `must be a duration from ${MIN_WINDOW_SECONDS}s to ${MAX_WINDOW_SECONDS / 60}m, such as 30s or 2m`,
  )
  .transform((v) => parseDuration(v)!)
  .optional()
  .describe(
    `How long to observe (${MIN_WINDOW_SECONDS}s-${MAX_WINDOW_SECONDS / 60}m, e.g. 30s): the answer waits that long and counts what the CPUs did meanwhile. ` +
      'Without it the counters are compared with the previous read (since boot on the first), which costs no wait.',
  );

const cpusInput = z
  .string()
  .max(MAX_CPU_LIST_LENGTH)
  .refine((v) => parseCpuList(v) !== null, `must be ${CPU_LIST_RULE}`)
  .transform((v) => parseCpuList(v)!)
  .optional()
  .describe(
    `The CPUs to observe, as a Linux CPU list such as 0-3,8 (the form of cpuset.cpus; CPUs 0-${MAX_CPU}, at most ${MAX_CPU_LIST_LENGTH} characters; ` +
      "on Windows a CPU is group x 64 + number): for work pinned to them (a container's cpuset, a NUMA node), so that other CPUs' work " +
      'does not dilute its cost. Without it every CPU is observed; a list naming no CPU of this system is refused.',
  );

export const getWorkloadCost = defineOperation({
  name: 'get_workload_cost',
  title: "Estimate what the plan costs this server's work",
  description:
    "Observes how this server's CPUs alternate between work and idle (idle entries per second, mean idle period, " +
    'share per idle state, busy share, from the OS counters: Linux cpuidle and /proc/stat, Windows Processor ' +
    'Information) and estimates by how much the plan in force lengthens that work: addedPercent with a low-high ' +
    'range, the added time per wake-up, and what a performance plan would recover. The costs come from the newest ' +
    'benchmark of the last 24 h under the plan in force, else from the published exit latencies of the idle states ' +
    '(basis says which). An idle server gets no number but the reason "too little work observed to estimate". ' +
    'With window it waits that long (progress is reported); without, it compares with the previous read. ' +
    'With `cpus` only those CPUs are observed and estimated. Changes nothing.',
  input: z.object({ window: windowInput, cpus: cpusInput }).strict(),
  output: WorkloadCost,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/workload' },
  cli: { command: ['workload'], format: formatWorkloadCost },
  handler: async (input, ctx) =>
    ctx.workload.cost({
      ...(input.window !== undefined ? { windowS: input.window } : {}),
      ...(input.cpus !== undefined ? { cpus: input.cpus } : {}),
      consumer: 'request',
      signal: ctx.signal,
      progress: ctx.progress,
    }),
});
