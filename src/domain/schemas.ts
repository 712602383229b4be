/**
 * The shapes every backend, operation and surface share. JSON field names here are a public
 * contract (REST, MCP structured content, CLI --json, the committed OpenAPI document): add fields,
 * never rename them. Schemas carrying `.meta({ id })` become named components in OpenAPI.
 */
import { z } from 'zod';
import { AcDc } from './acdc.ts';
import { Control, Effective, IdleStates, SettingDifference } from './idle.ts';
import { Note } from './notes.ts';

export const planKinds = [
  'ultimate-performance',
  'high-performance',
  'balanced',
  'power-saver',
  'custom',
] as const;
export const PlanKind = z
  .enum(planKinds)
  .meta({ id: 'PlanKind', description: 'What the plan does, independent of its (possibly localized) name.' });
export type PlanKind = z.infer<typeof PlanKind>;

/** A plan a backend can create when it is missing, named by the template it is created from. */
export interface PlanTemplate {
  id: string;
  name: string;
  kind: PlanKind;
}

export const KindSource = z
  .enum(['well-known-id', 'personality', 'settings', 'profile-name', 'default'])
  .meta({
    id: 'KindSource',
    description:
      'How `kind` was decided: a well-known plan id, the Windows scheme personality setting, the processor settings, the profile/governor name, or nothing better than `custom`.',
  });

export const Plan = z
  .object({
    id: z
      .string()
      .describe('Stable identifier: the lowercase GUID on Windows, the profile or governor name on Linux.'),
    name: z
      .string()
      .describe('Display name as the system reports it (localized on Windows, may be renamed).'),
    kind: PlanKind,
    kindSource: KindSource.optional(),
    active: z.boolean().describe('True for the plan in force now.'),
    builtin: z.boolean().describe('True for plans the OS or daemon ships; false for user-created ones.'),
    description: z.string().optional().describe('What the plan is for, when the system says so.'),
    edited: z
      .boolean()
      .optional()
      .describe(
        'Built-in plans only: true when a key setting differs from the stock plan (see `differences`), so the plan is not what its id promises.',
      ),
    differences: z
      .array(SettingDifference)
      .optional()
      .describe('The key settings of an edited built-in plan that differ from their stock values.'),
  })
  .meta({
    id: 'Plan',
    description: 'A power plan (Windows power scheme, tuned/PPD profile or cpufreq governor).',
  });
export type Plan = z.infer<typeof Plan>;

export { AcDc } from './acdc.ts';

export const ProcessorSettings = z
  .object({
    minStatePercent: AcDc.nullable().describe('Minimum processor state in % (Windows PROCTHROTTLEMIN).'),
    maxStatePercent: AcDc.nullable().describe('Maximum processor state in % (Windows PROCTHROTTLEMAX).'),
    boostMode: AcDc.nullable().describe(
      'Processor performance boost mode (Windows PERFBOOSTMODE: 0 off, 1 on, 2 aggressive, ...).',
    ),
    epp: AcDc.nullable().describe(
      'Energy performance preference, 0 = performance .. 100 = energy (Windows PERFEPP).',
    ),
    coreParkingMinCores: AcDc.nullable()
      .optional()
      .describe('Core parking: minimum unparked cores in % (Windows CPMINCORES).'),
    perfIncreaseThreshold: AcDc.nullable()
      .optional()
      .describe('Busy % above which the clock is raised (Windows PERFINCTHRESHOLD).'),
    perfIncreaseTime: AcDc.nullable()
      .optional()
      .describe('Check intervals before raising the clock (Windows PERFINCTIME).'),
    governor: z.string().nullable().describe('cpufreq scaling governor (Linux); `mixed` when CPUs disagree.'),
    driver: z
      .string()
      .nullable()
      .describe(
        'cpufreq scaling driver, e.g. intel_pstate, intel_cpufreq, amd-pstate-epp, acpi-cpufreq (Linux).',
      ),
    energyPreference: z
      .string()
      .nullable()
      .describe(
        'energy_performance_preference (Linux), e.g. performance, balance_performance; `mixed` when CPUs disagree.',
      ),
    turbo: z
      .boolean()
      .nullable()
      .describe('Turbo / boost enabled (Linux intel_pstate no_turbo or cpufreq boost).'),
    platformProfile: z
      .string()
      .nullable()
      .describe('ACPI platform_profile (Linux), e.g. performance, balanced, low-power.'),
    driverMode: z
      .string()
      .nullable()
      .optional()
      .describe(
        'Mode of the cpufreq driver (Linux intel_pstate / amd_pstate status: active, passive, guided); it changes what `powersave` means.',
      ),
    cpus: z
      .array(
        z.object({
          cpu: z.number().int(),
          driver: z.string().nullable(),
          governor: z.string().nullable(),
          energyPreference: z.string().nullable(),
          minFreqKHz: z.number().nullable(),
          maxFreqKHz: z.number().nullable(),
          curFreqKHz: z.number().nullable(),
        }),
      )
      .optional()
      .describe('Per-CPU cpufreq settings (Linux), present when CPUs disagree.'),
  })
  .meta({
    id: 'ProcessorSettings',
    description:
      'The effective processor power settings of the active plan; `null` where this system does not expose a setting.',
  });
export type ProcessorSettings = z.infer<typeof ProcessorSettings>;

export const emptyProcessorSettings = (): ProcessorSettings => ({
  minStatePercent: null,
  maxStatePercent: null,
  boostMode: null,
  epp: null,
  governor: null,
  driver: null,
  energyPreference: null,
  turbo: null,
  platformProfile: null,
});

export const Owner = z
  .enum([
    'powercfg',
    'group-policy',
    'tuned',
    'power-profiles-daemon',
    'sysfs',
    'firmware',
    'hypervisor',
    'simulated',
    'none',
  ])
  .meta({
    id: 'Owner',
    description: 'Who decides the power policy on this system, and so through whom a change must go.',
  });
export type Owner = z.infer<typeof Owner>;

export const DesiredSummary = z
  .object({
    planId: z.string().describe('The desired plan (its id; as configured when it matches no plan).'),
    inDesiredState: z.boolean().describe('True when the desired plan is the plan in force.'),
    status: z
      .enum(['in-desired-state', 'drift', 'held', 'policy-managed', 'unknown-plan'])
      .describe(
        'drift: another plan is in force; held: a hold is in force, so drift is neither counted nor corrected; ' +
          'policy-managed: group policy owns the plan, so drift is reported, never corrected; unknown-plan: the ' +
          'desired plan matches no plan here.',
      ),
    lastCheck: z
      .string()
      .nullable()
      .describe('ISO 8601 time of the last periodic check by the running service; null when none ran yet.'),
    enforce: z.boolean().describe('True when the service sets the desired plan back on drift.'),
  })
  .meta({
    id: 'DesiredSummary',
    description: 'The desired plan, when one is set, compared with the plan in force.',
  });
export type DesiredSummary = z.infer<typeof DesiredSummary>;

export const ActivePlan = z
  .object({
    plan: Plan.nullable().describe('The plan in force; null when the system exposes no power plans at all.'),
    processor: ProcessorSettings,
    owner: Owner,
    policyManaged: z
      .boolean()
      .describe('True when a policy (e.g. Windows group policy) sets the plan and will revert a change.'),
    canSet: z.boolean().describe('True when this service can change the plan here.'),
    cannotSetReason: z
      .string()
      .optional()
      .describe('Why the plan cannot be changed, and what to do about it.'),
    notes: z
      .array(Note)
      .optional()
      .describe('Things the caller should know about this answer, each with a stable code to match on.'),
    warnings: z
      .array(z.string())
      .optional()
      .describe('The texts of `notes`, in the same order (kept for clients that read only the text).'),
    desired: DesiredSummary.optional().describe(
      'Present when a desired plan is set (see get_desired_state).',
    ),
    idle: IdleStates.optional().describe(
      'The idle states (C-states) and their wake-up cost; absent where the backend cannot read them.',
    ),
    control: Control.optional().describe('Who controls the processor (OS, firmware, hypervisor) and why.'),
    effective: Effective.optional().describe(
      'The read-back after this service last switched to the plan in force: what did not take effect (absent when it did not switch to it).',
    ),
  })
  .meta({
    id: 'ActivePlan',
    description: 'The plan in force, its effective processor settings and who owns them.',
  });
export type ActivePlan = z.infer<typeof ActivePlan>;

export const BackendName = z
  .enum(['windows', 'linux', 'simulated', 'unsupported'])
  .meta({ id: 'BackendName', description: 'Which power backend answers.' });
export type BackendName = z.infer<typeof BackendName>;

export const Capabilities = z
  .object({
    listPlans: z.boolean().describe('Plans can be listed.'),
    setPlan: z
      .boolean()
      .describe('The active plan can be changed (also depends on rights, see get_active_power_plan.canSet).'),
    createPlan: z.boolean().describe('Missing well-known plans (e.g. Ultimate Performance) can be created.'),
    processorSettings: z.boolean().describe('Processor settings of the plan are readable.'),
  })
  .meta({ id: 'Capabilities', description: 'What the backend can do on this system.' });
export type Capabilities = z.infer<typeof Capabilities>;

export const Virtualization = z
  .object({
    detected: z.boolean().describe('True when running in a virtual machine or container.'),
    kind: z
      .string()
      .nullable()
      .describe('The hypervisor or container type when known, e.g. kvm, vmware, microsoft, xen, docker.'),
  })
  .meta({ id: 'Virtualization' });
export type Virtualization = z.infer<typeof Virtualization>;

export const PowerSource = z.enum(['ac', 'battery', 'unknown']).meta({ id: 'PowerSource' });
export type PowerSource = z.infer<typeof PowerSource>;

export const PlanList = z
  .object({
    backend: BackendName,
    activePlanId: z.string().nullable().describe('Id of the plan in force, null when none is exposed.'),
    plans: z.array(Plan),
  })
  .meta({ id: 'PlanList' });
export type PlanList = z.infer<typeof PlanList>;

export const SystemInfo = z
  .object({
    hostname: z.string(),
    os: z.string().describe('Operating system family: windows, linux, darwin, ...'),
    release: z.string().describe('Kernel / OS release string.'),
    arch: z.string(),
    cpu: z.object({
      model: z.string(),
      logicalCpus: z.number().int(),
    }),
    virtualization: Virtualization,
    powerSource: PowerSource,
    backend: z.object({ name: BackendName, capabilities: Capabilities }),
    service: z.object({
      version: z.string(),
      node: z.string(),
      execArgv: z
        .array(z.string())
        .describe(
          "The Node.js options the service runs with (process.execArgv): deploy/v8-flags.json's memory flags wherever it was started as shipped.",
        ),
      fleet: z
        .boolean()
        .describe(
          'Whether a fleet is configured (a fleet file or an Ansible inventory); the fleet operations answer only then.',
        ),
    }),
  })
  .meta({ id: 'SystemInfo' });
export type SystemInfo = z.infer<typeof SystemInfo>;

export const SetPlanResult = z
  .object({
    changed: z.boolean().describe('True when the active plan was (or, with dryRun, would be) changed.'),
    dryRun: z.boolean(),
    created: z.boolean().optional().describe('True when the plan had to be created first (create: true).'),
    before: Plan,
    after: Plan,
    warnings: z.array(z.string()).optional(),
    effective: Effective.optional().describe(
      'The settings read back after the switch; a mismatch also adds a warning. Absent for a dry run or no change.',
    ),
  })
  .meta({ id: 'SetPlanResult' });
export type SetPlanResult = z.infer<typeof SetPlanResult>;
