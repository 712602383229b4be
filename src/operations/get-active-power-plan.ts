/** get_active_power_plan: the plan in force, its processor settings, owner and whether it can change. */
import { ActivePlan } from '../domain/schemas.ts';
import { facts } from '../lib/table.ts';
import { activePlan } from '../services/plans.ts';
import { defineOperation, readOnly } from './define.ts';
import { controlLines, effectiveLines, idleLines, planLine, processorLines } from './format.ts';
import { noInput } from './inputs.ts';

export const getActivePowerPlan = defineOperation({
  name: 'get_active_power_plan',
  title: 'Active power plan',
  description:
    'Returns the plan in force with its effective processor settings (minimum/maximum processor state, boost, ' +
    'energy performance preference on Windows; governor, driver, EPP, turbo, platform profile on Linux; null ' +
    'where not exposed), who owns the setting (powercfg, group policy, tuned, power-profiles-daemon, sysfs, ' +
    'firmware) and whether this service can change it, with the reason when it cannot; the idle states (Linux ' +
    'cpuidle states with exit latency, residency and share of idle time, PM QoS limits; Windows idle settings), ' +
    'who controls the processor (OS, firmware, hypervisor, with the evidence: Windows events 55/37, Linux ' +
    'bios_limit / intel_pstate), and the read-back of the last switch (settings that did not take effect). ' +
    'An edited built-in plan is marked `edited` with its differences. Warns when a damaged ' +
    'restore journal was kept aside (a restore may be pending). Read-only and cheap.',
  input: noInput,
  output: ActivePlan,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/plans/active' },
  cli: {
    command: ['active'],
    format: (a) =>
      [
        a.plan ? planLine(a.plan).trimStart() : 'No power plan is exposed on this system.',
        ...processorLines(a.processor),
        ...(a.idle ? idleLines(a.idle) : []),
        ...(a.control ? controlLines(a.control) : []),
        ...(a.effective ? effectiveLines(a.effective) : []),
        ...facts([
          ['Owner', `${a.owner}${a.policyManaged ? ' (policy-managed)' : ''}`],
          ['Can change', a.canSet ? 'yes' : `no: ${a.cannotSetReason ?? 'unknown reason'}`],
          [
            'Desired plan',
            a.desired
              ? `${a.desired.planId}: ${a.desired.status}${a.desired.enforce ? ' (enforced)' : ''}`
              : undefined,
          ],
        ]),
        ...(a.warnings ?? []).map((w) => `Warning: ${w}`),
      ].join('\n'),
  },
  handler: async (_input, ctx) => activePlan(ctx),
});
