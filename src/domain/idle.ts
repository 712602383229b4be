/**
 * The other half of what a power plan costs, and whether a change took effect: idle states
 * (Linux cpuidle and PM QoS, Windows processor idle settings), who controls the processor
 * (OS, firmware or hypervisor, with the evidence), built-in plans whose settings were edited, and
 * the requested-versus-effective read-back after a switch. A public contract like `schemas.ts`:
 * add fields, never rename them.
 */
import { z } from 'zod';
import { AcDc } from './acdc.ts';

/** The kernel's "no limit" value of /dev/cpu_dma_latency (PM_QOS_CPU_LATENCY_DEFAULT_VALUE, us). */
export const NO_LATENCY_LIMIT_US = 2_000_000_000;

export const IdleState = z
  .object({
    index: z.number().int().describe('Position of the state, shallowest first (Linux state<N>).'),
    name: z.string().describe('The state as the driver names it, e.g. POLL, C1, C1E, C6, `haltpoll idle`.'),
    description: z.string().nullable().describe('The driver\'s description, e.g. "MWAIT 0x20".'),
    exitLatencyUs: z
      .number()
      .nullable()
      .describe('Published worst-case time to wake from this state (us): what a request waits.'),
    targetResidencyUs: z
      .number()
      .nullable()
      .describe(
        'Minimum idle time (us) for this state to save energy; the governor picks it only for longer gaps.',
      ),
    disabled: z
      .boolean()
      .describe('True when this state is disabled (on every CPU; see `disabledOnCpus` for some).'),
    disabledOnCpus: z
      .array(z.number().int())
      .optional()
      .describe('CPUs on which this state is disabled, when only some are.'),
    usage: z.number().nullable().describe('Times the state was entered, summed over CPUs, since boot.'),
    timeUs: z.number().nullable().describe('Time spent in the state (us), summed over CPUs, since boot.'),
    timeShare: z
      .number()
      .nullable()
      .describe('Share of all idle time spent in this state (0..1), from the time counters.'),
  })
  .meta({ id: 'IdleState', description: 'One processor idle state (C-state).' });
export type IdleState = z.infer<typeof IdleState>;

export const PmQos = z
  .object({
    cpuDmaLatencyUs: z
      .number()
      .nullable()
      .describe(
        'The system-wide latency limit from /dev/cpu_dma_latency (us); 2000000000 is the kernel default (no limit); null when unreadable.',
      ),
    resumeLatencyUs: z
      .number()
      .nullable()
      .describe(
        'The strictest per-CPU pm_qos_resume_latency_us (us); 0 means no limit; null when not exposed.',
      ),
    limited: z
      .boolean()
      .describe(
        'True when a limit forbids some idle state (a process holds /dev/cpu_dma_latency, e.g. tuned).',
      ),
  })
  .meta({
    id: 'PmQos',
    description: 'Linux PM QoS limits on wake-up latency, which forbid deeper idle states.',
  });
export type PmQos = z.infer<typeof PmQos>;

export const WindowsIdleSettings = z
  .object({
    idleDisable: AcDc.nullable().describe(
      'Processor idle disable (IDLEDISABLE: 0 idle enabled, 1 idle disabled).',
    ),
    idleStateMaximum: AcDc.nullable().describe(
      'Deepest idle state allowed (IDLESTATEMAX; 0 = no limit). Hidden on most builds.',
    ),
    promoteThreshold: AcDc.nullable().describe(
      'Busy % below which a deeper idle state is chosen (IDLEPROMOTE).',
    ),
    demoteThreshold: AcDc.nullable().describe(
      'Busy % above which a shallower idle state is chosen (IDLEDEMOTE).',
    ),
  })
  .meta({ id: 'WindowsIdleSettings', description: "The active plan's processor idle settings (Windows)." });
export type WindowsIdleSettings = z.infer<typeof WindowsIdleSettings>;

export const IdleStates = z
  .object({
    source: z
      .enum(['cpuidle', 'powercfg', 'simulated', 'none'])
      .describe(
        'Where the facts come from: Linux cpuidle in sysfs, Windows powercfg, the simulation, or nothing.',
      ),
    driver: z.string().nullable().describe('cpuidle driver (Linux), e.g. intel_idle, acpi_idle, haltpoll.'),
    governor: z.string().nullable().describe('cpuidle governor (Linux), e.g. menu, teo, ladder, haltpoll.'),
    cpus: z.number().int().describe('CPUs whose idle states were read (0 on Windows).'),
    states: z.array(IdleState).describe('The idle states, shallowest first; empty when none are exposed.'),
    deepestEnabled: IdleState.nullable().describe(
      'The deepest state that is neither disabled nor forbidden by a PM QoS limit: its exit latency is the wake-up cost.',
    ),
    pmQos: PmQos.nullable().describe('Linux PM QoS limits; null on other systems.'),
    windows: WindowsIdleSettings.nullable().describe('Windows idle settings; null on other systems.'),
  })
  .meta({
    id: 'IdleStates',
    description:
      'How deep idle cores sleep and what waking them costs: the second half of what a power plan costs, next to the clock.',
  });
export type IdleStates = z.infer<typeof IdleStates>;

/** Idle states where only the Windows plan's idle settings are known (powercfg, or its simulation). */
export const windowsIdleStates = (
  source: 'powercfg' | 'simulated',
  windows: WindowsIdleSettings,
): IdleStates => ({
  source,
  driver: null,
  governor: null,
  cpus: 0,
  states: [],
  deepestEnabled: null,
  pmQos: null,
  windows,
});

/** Where and when a Kernel-Processor-Power event was written: the fields events 55 and 37 share. */
const eventOrigin = {
  group: z.number().int().describe('Processor group.'),
  time: z.string().nullable().describe('ISO 8601 time of the event.'),
};

export const ProcessorGroupCapabilities = z
  .object({
    ...eventOrigin,
    processor: z.number().int().describe('The processor the latest event 55 of this group was about.'),
    event: z
      .literal(26)
      .optional()
      .describe('26 when read from event 26 (older Windows: state counts only), absent for event 55.'),
    idleStateCount: z.number().int().nullable().describe('Idle states the firmware exposes.'),
    idleImplementation: z.number().int().nullable().describe('Idle state type code (1: ACPI C-states, ...).'),
    performanceImplementation: z
      .number()
      .int()
      .nullable()
      .describe('Performance control type code (0: none, i.e. the OS cannot change the clock).'),
    nominalFrequencyMHz: z.number().nullable(),
    maximumPerformancePercent: z.number().nullable(),
    minimumPerformancePercent: z.number().nullable(),
    minimumThrottlePercent: z.number().nullable(),
  })
  .meta({
    id: 'ProcessorGroupCapabilities',
    description:
      'Windows Kernel-Processor-Power event 55: the power management capabilities the firmware gives the OS.',
  });
export type ProcessorGroupCapabilities = z.infer<typeof ProcessorGroupCapabilities>;

export const FirmwareLimit = z
  .object({
    ...eventOrigin,
    processor: z.number().int().describe('The processor the event was about.'),
    seconds: z.number().nullable().describe('How long the processor ran limited since the last report (s).'),
  })
  .meta({
    id: 'FirmwareLimit',
    description:
      'Windows Kernel-Processor-Power event 37: the processor speed is being limited by system firmware.',
  });
export type FirmwareLimit = z.infer<typeof FirmwareLimit>;

export const ControlEvidence = z
  .object({
    source: z
      .string()
      .describe('Where the fact was read, e.g. `event 55`, `cpufreq/bios_limit`, `intel_pstate/status`.'),
    value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
    text: z.string().describe('What the fact means, in one sentence.'),
  })
  .meta({ id: 'ControlEvidence' });
export type ControlEvidence = z.infer<typeof ControlEvidence>;

export const Control = z
  .object({
    decidedBy: z
      .enum(['os', 'firmware', 'hypervisor', 'unknown'])
      .describe(
        'Who decides the processor clock and idle states: the OS (a plan change works), the firmware, or the hypervisor.',
      ),
    clockControl: z
      .boolean()
      .nullable()
      .describe(
        'True when the OS can change the clock here; false when nothing here can; null when unknown.',
      ),
    idleControl: z
      .boolean()
      .nullable()
      .describe('True when the OS can choose among several idle states; false with one state or none.'),
    evidence: z.array(ControlEvidence).describe('The facts the decision rests on, never a guess.'),
    processorGroups: z
      .array(ProcessorGroupCapabilities)
      .optional()
      .describe('Windows: the latest event 55 per processor group.'),
    firmwareLimits: z
      .array(FirmwareLimit)
      .optional()
      .describe('Windows: event 37 reports that firmware limited the speed.'),
  })
  .meta({
    id: 'Control',
    description: 'Who controls the processor: OS, firmware or hypervisor, with the evidence.',
  });
export type Control = z.infer<typeof Control>;

/** The value of one setting, as a plan or the system holds it. */
const SettingValue = z.union([z.number(), z.string(), z.boolean(), z.null()]);

export const SettingDifference = z
  .object({
    setting: z.string().describe('The setting, e.g. `minStatePercent.ac`, `idleDisable.ac`.'),
    stock: SettingValue.describe('Its value in the stock plan.'),
    value: SettingValue.describe('Its value in this plan.'),
  })
  .meta({
    id: 'SettingDifference',
    description: 'A key setting of a built-in plan that differs from its stock value.',
  });
export type SettingDifference = z.infer<typeof SettingDifference>;

export const Mismatch = z
  .object({
    setting: z
      .string()
      .describe('The setting that did not take effect, e.g. `minStatePercent.ac`, `governor`.'),
    wanted: SettingValue.describe('What the plan asks for.'),
    got: SettingValue.describe('What is in force.'),
    cause: z.string().describe('The probable cause, and what to do about it.'),
  })
  .meta({ id: 'Mismatch', description: 'A setting the switch asked for that is not in force.' });
export type Mismatch = z.infer<typeof Mismatch>;

export const Effective = z
  .object({
    checked: z.boolean().describe('False when this system offers no way to read the settings back.'),
    matches: z.boolean().describe('True when every checked setting is as the plan asks.'),
    settings: z.array(z.string()).describe('The settings that were read back.'),
    mismatches: z
      .array(Mismatch)
      .describe('The settings that are not as the plan asks; empty when it took effect.'),
  })
  .meta({
    id: 'Effective',
    description:
      'Requested versus effective: the settings read back after a switch, and what did not take effect.',
  });
export type Effective = z.infer<typeof Effective>;

export const notChecked = (): Effective => ({ checked: false, matches: true, settings: [], mismatches: [] });
