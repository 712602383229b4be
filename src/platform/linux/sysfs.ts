/**
 * Reads the cpufreq knobs from a sysfs tree (the real `/sys` or a fixture tree standing in for
 * it) and writes governor / EPP values back. A missing file means "not exposed here" and reads as
 * null, never as an error: most VMs have no cpufreq at all and many drivers lack EPP or boost.
 */
import { constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpuRuns } from '../../domain/cpu-list.ts';

/** The cpufreq view of one CPU; frequencies in kHz as the kernel reports them. */
export interface CpuFreq {
  cpu: number;
  dir: string;
  driver: string | null;
  governor: string | null;
  governors: string[];
  energyPreference: string | null;
  energyPreferences: string[];
  minKHz: number | null;
  maxKHz: number | null;
  curKHz: number | null;
  hwMinKHz: number | null;
  hwMaxKHz: number | null;
}

export interface SysfsState {
  root: string;
  cpus: CpuFreq[];
  intelPstate: {
    status: string | null;
    noTurbo: boolean | null;
    minPerfPct: number | null;
    maxPerfPct: number | null;
  } | null;
  amdPstateStatus: string | null;
  /** cpufreq/boost (acpi-cpufreq, amd-pstate): true when boost is allowed. */
  boost: boolean | null;
  platformProfile: string | null;
  platformProfileChoices: string[];
}

/** The write side, injectable so tests can make the kernel refuse a write (tests often run as root). */
export interface SysfsIo {
  write(path: string, value: string): Promise<void>;
  writable(path: string): Promise<boolean>;
}

export const defaultSysfsIo: SysfsIo = {
  write: (path, value) => writeFile(path, value),
  writable: (path) =>
    access(path, constants.W_OK).then(
      () => true,
      () => false,
    ),
};

/**
 * A sysfs attribute without its trailing newline (EPP choices end with a space too); null when absent.
 * Read synchronously: a sysfs or procfs attribute is generated in memory by the kernel and never
 * waits for a disk, and the four thread-pool round trips of an asynchronous read (open, fstat,
 * read, close) cost about five times the CPU, which at ~35 attributes per read was most of a
 * scrape's cost (docs/PERFORMANCE.md).
 */
export const readAttr = async (path: string): Promise<string | null> => {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
};

/**
 * Whether a sysfs, procfs or configuration path exists, asked as readAttr reads: synchronously,
 * and without the exception a missing path costs an asynchronous check (most of sysfs is absent
 * on a given machine: no cpufreq in a VM, no EPP on acpi-cpufreq).
 */
export const present = (path: string): boolean => {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
};

/** A directory's entries, as readAttr reads (synchronously); none when it is absent or unreadable. */
export const entries = (dir: string): string[] => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

const words = (s: string | null): string[] => (s ? s.split(/\s+/).filter(Boolean) : []);

const int = (s: string | null): number | null => {
  if (s === null || !/^-?\d+$/.test(s)) return null;
  return Number(s);
};

const flag = (s: string | null): boolean | null => (s === '1' ? true : s === '0' ? false : null);

const cpuDir = (root: string) => join(root, 'devices', 'system', 'cpu');

const readCpu = async (cpu: number, dir: string): Promise<CpuFreq> => {
  const f = (name: string) => readAttr(join(dir, name));
  const [driver, governor, governors, epp, epps, min, max, cur, hwMin, hwMax] = await Promise.all([
    f('scaling_driver'),
    f('scaling_governor'),
    f('scaling_available_governors'),
    f('energy_performance_preference'),
    f('energy_performance_available_preferences'),
    f('scaling_min_freq'),
    f('scaling_max_freq'),
    f('scaling_cur_freq'),
    f('cpuinfo_min_freq'),
    f('cpuinfo_max_freq'),
  ]);
  return {
    cpu,
    dir,
    driver,
    governor,
    governors: words(governors),
    energyPreference: epp,
    energyPreferences: words(epps),
    minKHz: int(min),
    maxKHz: int(max),
    curKHz: int(cur),
    hwMinKHz: int(hwMin),
    hwMaxKHz: int(hwMax),
  };
};

/** Online CPUs that have a cpufreq directory, in CPU order. */
const readCpus = async (root: string): Promise<CpuFreq[]> => {
  const ids = entries(cpuDir(root))
    .map((n) => /^cpu(\d+)$/.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const cpus = await Promise.all(
    ids.map(async (id) => {
      const base = join(cpuDir(root), `cpu${id}`);
      // An offline CPU keeps its directory but answers nothing useful; cpu0 often has no `online` file.
      if ((await readAttr(join(base, 'online'))) === '0') return null;
      const dir = join(base, 'cpufreq');
      return present(dir) ? readCpu(id, dir) : null;
    }),
  );
  return cpus.filter((c): c is CpuFreq => c !== null);
};

export const readSysfs = async (root: string): Promise<SysfsState> => {
  const cpu = cpuDir(root);
  const pstate = (name: string) => readAttr(join(cpu, 'intel_pstate', name));
  const [cpus, status, noTurbo, minPct, maxPct, amd, boost, profile, choices] = await Promise.all([
    readCpus(root),
    pstate('status'),
    pstate('no_turbo'),
    pstate('min_perf_pct'),
    pstate('max_perf_pct'),
    readAttr(join(cpu, 'amd_pstate', 'status')),
    readAttr(join(cpu, 'cpufreq', 'boost')),
    readAttr(join(root, 'firmware', 'acpi', 'platform_profile')),
    readAttr(join(root, 'firmware', 'acpi', 'platform_profile_choices')),
  ]);
  const hasPstate = [status, noTurbo, minPct, maxPct].some((v) => v !== null);
  return {
    root,
    cpus,
    intelPstate: hasPstate
      ? { status, noTurbo: flag(noTurbo), minPerfPct: int(minPct), maxPerfPct: int(maxPct) }
      : null,
    amdPstateStatus: amd,
    boost: flag(boost),
    platformProfile: profile,
    platformProfileChoices: words(choices),
  };
};

/** The value all CPUs share, `mixed` when they disagree, null when none has it. */
export const common = (values: readonly (string | null)[]): string | null => {
  const present = values.filter((v): v is string => v !== null);
  if (present.length === 0) return null;
  return present.every((v) => v === present[0]) && present.length === values.length ? present[0]! : 'mixed';
};

/** Compact CPU lists for messages: [0,1,2,5] -> "cpu0-2, cpu5". */
export const cpuList = (cpus: readonly number[]): string =>
  cpuRuns(cpus)
    .map(([a, b]) => (a === b ? `cpu${a}` : `cpu${a}-${b}`))
    .join(', ');

/** The driver works with EPP (intel_pstate active with HWP, amd-pstate-epp active): every CPU exposes it. */
export const hasEpp = (s: SysfsState): boolean =>
  s.cpus.length > 0 && s.cpus.every((c) => c.energyPreference !== null && c.energyPreferences.length > 0);

/** The driver's mode as the kernel names it: intel_pstate / amd_pstate status (active, passive, guided). */
export const driverMode = (s: SysfsState): string | null => {
  const driver = common(s.cpus.map((c) => c.driver));
  // Without the status file the driver name still tells the mode (intel_cpufreq is intel_pstate passive).
  if (driver === 'intel_pstate' || driver === 'intel_cpufreq') {
    return s.intelPstate?.status ?? (driver === 'intel_pstate' ? 'active' : 'passive');
  }
  if (driver?.startsWith('amd-pstate'))
    return s.amdPstateStatus ?? (driver === 'amd-pstate-epp' ? 'active' : null);
  return null;
};

/**
 * The governor trap (docs/LINUX.md): with intel_pstate active (or amd-pstate-epp) the `powersave` governor is
 * the driver's own algorithm steered by EPP (behaves like "balanced"); everywhere else, including
 * intel_cpufreq (intel_pstate passive), `powersave` pins the minimum clock.
 */
export const powersaveIsBalanced = (driver: string | null): boolean =>
  driver === 'intel_pstate' || driver === 'amd-pstate-epp';
