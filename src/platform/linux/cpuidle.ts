/**
 * Linux idle states from sysfs (`devices/system/cpu/cpuidle` and each CPU's `cpuidle/state*`), the
 * PM QoS limits that forbid deep states (`/dev/cpu_dma_latency`, per-CPU
 * `power/pm_qos_resume_latency_us`), and who controls the processor (`cpufreq/bios_limit`,
 * intel_pstate `status` and `no_turbo`). Missing files read as "not exposed", never as an error.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Control,
  type ControlEvidence,
  type IdleState,
  type IdleStates,
  NO_LATENCY_LIMIT_US,
  type PmQos,
} from '../../domain/idle.ts';
import { entries, readAttr, type SysfsState } from './sysfs.ts';

const int = (s: string | null): number | null => (s !== null && /^\d+$/.test(s) ? Number(s) : null);

const numbered = async (dir: string, prefix: string): Promise<number[]> => {
  const name = new RegExp(`^${prefix}(\\d+)$`);
  return entries(dir)
    .map((n) => name.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
};

interface RawState {
  index: number;
  name: string;
  description: string | null;
  latency: number | null;
  residency: number | null;
  disabled: boolean;
  usage: number | null;
  time: number | null;
}

const readState = async (dir: string, index: number): Promise<RawState | null> => {
  const f = (n: string) => readAttr(join(dir, n));
  const [name, desc, latency, residency, disable, flags, usage, time] = await Promise.all([
    f('name'),
    f('desc'),
    f('latency'),
    f('residency'),
    f('disable'),
    f('flags'),
    f('usage'),
    f('time'),
  ]);
  // A directory with nothing a state has is no state; one without `name` is named by its directory.
  if (name === null && latency === null && usage === null) return null;
  return {
    index,
    name: name || `state${index}`,
    // The kernel prints a state without a description as "(null)" (some as "<null>").
    description: desc === null || /^[(<]null[)>]$/i.test(desc) ? null : desc,
    latency: int(latency),
    residency: int(residency),
    disabled: disable === '1' || /\bdisabled\b/i.test(flags ?? ''),
    usage: int(usage),
    time: int(time),
  };
};

/** The 32-bit value a reader of /dev/cpu_dma_latency gets: the limit in force (binary, or text on old kernels). */
export const parseDmaLatency = (bytes: Buffer): number | null => {
  if (bytes.length === 4) return bytes.readInt32LE(0);
  const text = bytes.toString('latin1').trim();
  if (/^\d+$/.test(text)) return Number(text);
  if (/^0x[0-9a-f]+$/i.test(text)) return Number.parseInt(text, 16);
  return null;
};

/** Read synchronously, like readAttr: a character device answered from memory. */
const readDmaLatency = async (path: string): Promise<number | null> => {
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(16);
      const bytesRead = readSync(fd, buf, 0, 16, null);
      return parseDmaLatency(buf.subarray(0, bytesRead));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
};

const sumOrNull = (xs: (number | null)[]): number | null =>
  xs.some((x) => x !== null) ? xs.reduce<number>((s, x) => s + (x ?? 0), 0) : null;

/**
 * Folds per-CPU states into one list (states are the same on every CPU; counters are summed) and
 * adds each state's share of idle time.
 */
export const summarizeStates = (perCpu: RawState[][]): IdleState[] => {
  const first = perCpu[0] ?? [];
  const totalTime = sumOrNull(perCpu.flat().map((s) => s.time));
  return first.map((s) => {
    const same = perCpu.map((cpu) => cpu.find((x) => x.index === s.index));
    const offOn = same.flatMap((x, cpu) => (x?.disabled ? [cpu] : []));
    const time = sumOrNull(same.map((x) => x?.time ?? null));
    const all = offOn.length === perCpu.length;
    return {
      index: s.index,
      name: s.name,
      description: s.description,
      exitLatencyUs: s.latency,
      targetResidencyUs: s.residency,
      disabled: all,
      ...(offOn.length && !all ? { disabledOnCpus: offOn } : {}),
      usage: sumOrNull(same.map((x) => x?.usage ?? null)),
      timeUs: time,
      timeShare: time !== null && totalTime ? Math.round((time / totalTime) * 10_000) / 10_000 : null,
    };
  });
};

/** The deepest state a CPU may enter: not disabled, and within the PM QoS latency limit. */
export const deepestEnabled = (states: IdleState[], limitUs: number | null): IdleState | null => {
  const allowed = states.filter(
    (s) => !s.disabled && (limitUs === null || s.exitLatencyUs === null || s.exitLatencyUs <= limitUs),
  );
  return allowed[allowed.length - 1] ?? null;
};

export interface CpuidleOptions {
  sysfsRoot: string;
  /** /dev/cpu_dma_latency; null: not read (a fixture tree). */
  dmaLatencyPath: string | null;
}

export const readIdleStates = async (o: CpuidleOptions): Promise<IdleStates> => {
  const cpuRoot = join(o.sysfsRoot, 'devices', 'system', 'cpu');
  const [driver, governor, cpuIds, dma] = await Promise.all([
    readAttr(join(cpuRoot, 'cpuidle', 'current_driver')),
    readAttr(join(cpuRoot, 'cpuidle', 'current_governor')).then(
      async (g) => g ?? readAttr(join(cpuRoot, 'cpuidle', 'current_governor_ro')),
    ),
    numbered(cpuRoot, 'cpu'),
    o.dmaLatencyPath ? readDmaLatency(o.dmaLatencyPath) : Promise.resolve(null),
  ]);
  const perCpu: RawState[][] = [];
  const resume: number[] = [];
  // With CONFIG_CPU_IDLE_MULTIPLE_DRIVERS (common on ARM) each CPU names its driver (psci_idle).
  let cpuDriver: string | null = null;
  for (const cpu of cpuIds) {
    const base = join(cpuRoot, `cpu${cpu}`);
    if ((await readAttr(join(base, 'online'))) === '0') continue;
    const idx = await numbered(join(base, 'cpuidle'), 'state');
    const states = (
      await Promise.all(idx.map((i) => readState(join(base, 'cpuidle', `state${i}`), i)))
    ).filter((s): s is RawState => s !== null);
    if (states.length) perCpu.push(states);
    cpuDriver ??= await readAttr(join(base, 'cpuidle', 'driver', 'name'));
    const r = int(await readAttr(join(base, 'power', 'pm_qos_resume_latency_us')));
    if (r !== null) resume.push(r);
  }
  // 0 in pm_qos_resume_latency_us means "no limit"; "n/a" means "no state allowed" and reads as null here.
  const strictResume = resume.filter((r) => r > 0);
  const resumeLimit = strictResume.length ? Math.min(...strictResume) : resume.length ? 0 : null;
  const limits = [dma !== null && dma < NO_LATENCY_LIMIT_US ? dma : null, resumeLimit || null].filter(
    (x): x is number => x !== null,
  );
  const limit = limits.length ? Math.min(...limits) : null;
  const states = summarizeStates(perCpu);
  const named = driver && driver !== 'none' ? driver : cpuDriver && cpuDriver !== 'none' ? cpuDriver : null;
  const pmQos: PmQos | null =
    dma === null && resumeLimit === null
      ? null
      : {
          cpuDmaLatencyUs: dma,
          resumeLatencyUs: resumeLimit,
          limited: limit !== null && states.some((s) => s.exitLatencyUs !== null && s.exitLatencyUs > limit),
        };
  return {
    source: named || states.length ? 'cpuidle' : 'none',
    driver: named,
    governor,
    cpus: perCpu.length,
    states,
    deepestEnabled: deepestEnabled(states, limit),
    pmQos,
    windows: null,
  };
};

/** Who controls the processor on Linux, from what sysfs says (and the VM detection). */
export const linuxControl = async (
  state: SysfsState,
  idle: IdleStates,
  vm: string | null,
): Promise<Control> => {
  const evidence: ControlEvidence[] = [];
  const biosLimits = await Promise.all(state.cpus.map((c) => readAttr(join(c.dir, 'bios_limit'))));
  const limited = state.cpus.flatMap((c, i) => {
    const v = int(biosLimits[i] ?? null);
    const max = c.hwMaxKHz ?? c.maxKHz;
    return v !== null && max !== null && v < max ? [{ cpu: c.cpu, v, max }] : [];
  });
  if (limited.length) {
    evidence.push({
      source: 'cpufreq/bios_limit',
      value: limited[0]!.v,
      text: `the firmware limits cpu${limited[0]!.cpu} to ${limited[0]!.v} kHz of ${limited[0]!.max} kHz (bios_limit): no OS setting can go above it`,
    });
  }
  const status = state.intelPstate?.status ?? null;
  if (status !== null) {
    evidence.push({
      source: 'intel_pstate/status',
      value: status,
      text:
        status === 'off'
          ? 'intel_pstate is off: another driver (or the firmware) sets the clock'
          : `intel_pstate is ${status}: the OS sets the clock${status === 'active' ? ' (the driver chooses it, steered by EPP)' : ''}`,
    });
  }
  if (state.intelPstate?.noTurbo === true) {
    evidence.push({
      source: 'intel_pstate/no_turbo',
      value: true,
      text: 'turbo is disabled (no_turbo = 1); when the firmware set it, writing 0 is refused',
    });
  }
  if (state.cpus.some((c) => c.driver === 'pcc-cpufreq')) {
    evidence.push({
      source: 'cpufreq/scaling_driver',
      value: 'pcc-cpufreq',
      text: 'pcc-cpufreq: the firmware (processor clocking control) owns the clock; the OS only passes requests on',
    });
  }
  const clockControl = state.cpus.length > 0 && !state.cpus.every((c) => c.driver === 'pcc-cpufreq');
  if (state.cpus.length === 0) {
    evidence.push({
      source: 'cpufreq',
      value: null,
      text: vm
        ? `no cpufreq in sysfs: in this virtual machine (${vm}) the hypervisor host decides the clock`
        : 'no cpufreq in sysfs: the firmware decides the clock (or no driver is loaded)',
    });
  }
  const usable = idle.states.filter((s) => !s.disabled);
  evidence.push({
    source: 'cpuidle',
    value: idle.driver,
    text: idle.driver
      ? `cpuidle driver ${idle.driver} with ${idle.states.length} state(s) (${usable.map((s) => s.name).join(', ') || 'none enabled'})`
      : 'no cpuidle driver: idle CPUs only halt (or poll), nothing here changes how deep they sleep',
  });
  const decidedBy: Control['decidedBy'] =
    !clockControl && vm
      ? 'hypervisor'
      : !clockControl || limited.length || status === 'off'
        ? 'firmware'
        : 'os';
  return {
    decidedBy,
    clockControl,
    idleControl: idle.driver ? usable.length > 1 : false,
    evidence,
  };
};
