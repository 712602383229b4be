/**
 * The live idle counters of a Linux host, read passively (no timer, no wake-up, no program): per
 * CPU and idle state `usage`, `time`, `above`, `below` and `disable` from sysfs cpuidle, busy and
 * idle time per CPU from /proc/stat, the counters' clock from /proc/uptime, and, on a kernel
 * without a cpuidle driver, the interrupts each CPU took (/proc/interrupts) as wake-ups; and each
 * process's own bursts of work (task-bursts.ts). What does not change between reads (the CPUs, each state's name and exit latency) is read once and again
 * only when the set of online CPUs changes.
 *
 * Grammar of the lines read:
 *   /proc/uptime      `<seconds since boot> <idle seconds>`
 *   /proc/stat        `cpuN user nice system idle iowait irq softirq steal guest guest_nice` (USER_HZ ticks)
 *   /proc/interrupts  a header `CPU0 CPU1 ...`, then `<irq>: <count per CPU> <chip and name>`
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { CpuCounters, IdleCounterReader, IdleSnapshot, StateCounters } from '../../domain/workload.ts';
import { createKeptFiles, readText } from './kept-files.ts';
import { createTaskReader, USER_HZ } from './task-bursts.ts';

const US_PER_TICK = 1_000_000 / USER_HZ;

const int = (s: string | null): number | null => {
  const t = s?.trim();
  return t && /^\d+$/.test(t) ? Number(t) : null;
};

export interface ProcStatCpu {
  cpu: number;
  busyUs: number;
  idleUs: number;
  totalUs: number;
}

/** The per-CPU lines of /proc/stat (the `cpu` total line is left out; online CPUs only). */
export const parseProcStat = (text: string): ProcStatCpu[] => {
  const out: ProcStatCpu[] = [];
  for (const line of text.split('\n')) {
    const m = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const f = m[2]!.trim().split(/\s+/).map(Number);
    if (f.length < 4 || f.some((x) => !Number.isFinite(x))) continue;
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
    const busy = user + nice + system + irq + softirq;
    out.push({
      cpu: Number(m[1]),
      busyUs: busy * US_PER_TICK,
      idleUs: (idle + iowait) * US_PER_TICK,
      totalUs: (busy + idle + iowait + steal) * US_PER_TICK,
    });
  }
  return out;
};

/** Interrupts taken per CPU (by CPU number), summed over every numbered and named source. */
export const parseInterrupts = (text: string): Map<number, number> => {
  const lines = text.split('\n');
  const header = (lines[0] ?? '')
    .trim()
    .split(/\s+/)
    .map((h) => /^CPU(\d+)$/.exec(h)?.[1]);
  const cpus = header.filter((h): h is string => h !== undefined).map(Number);
  const sums = new Map<number, number>(cpus.map((c) => [c, 0]));
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/);
    // ERR: and MIS: carry one total, not one count per CPU.
    if (fields.length < cpus.length) continue;
    for (let i = 0; i < cpus.length; i++) {
      const v = int(fields[i] ?? null);
      if (v === null) break;
      sums.set(cpus[i]!, sums.get(cpus[i]!)! + v);
    }
  }
  return sums;
};

interface StaticState {
  dir: string;
  name: string;
  exitLatencyUs: number | null;
}

/** A state directory without a `name` file is named by its directory, never dropped. */
const readStaticStates = (cpuDir: string): StaticState[] => {
  const idleDir = join(cpuDir, 'cpuidle');
  let names: string[];
  try {
    names = readdirSync(idleDir);
  } catch {
    return [];
  }
  return names
    .map((n) => /^state(\d+)$/.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b)
    .map((i) => {
      const dir = join(idleDir, `state${i}`);
      const name = readText(join(dir, 'name'))?.trim();
      return { dir, name: name || `state${i}`, exitLatencyUs: int(readText(join(dir, 'latency'))) };
    });
};

/** `disable` of 1, or a `flags` text that says so (some kernels show "disabled" there). */
const isDisabled = (dir: string, read: (path: string) => string | null): boolean =>
  read(join(dir, 'disable'))?.trim() === '1' || /\bdisabled\b/i.test(read(join(dir, 'flags')) ?? '');

const readStateCounters = (s: StaticState, read: (path: string) => string | null): StateCounters | null => {
  const usage = int(read(join(s.dir, 'usage')));
  const timeUs = int(read(join(s.dir, 'time')));
  if (usage === null || timeUs === null) return null;
  return {
    name: s.name,
    exitLatencyUs: s.exitLatencyUs,
    usage,
    timeUs,
    above: int(read(join(s.dir, 'above'))),
    below: int(read(join(s.dir, 'below'))),
    disabled: isDisabled(s.dir, read),
  };
};

/**
 * The ticks a busy CPU takes per second, from the kernel's build configuration: CONFIG_HZ when
 * the tick stops in idle (CONFIG_NO_HZ_IDLE=y), as on every distribution kernel of the last
 * decade; null when the kernel ticks in idle too or its configuration is not readable.
 */
export const busyTickHzOf = (config: string | null): number | null => {
  if (!config || !/^CONFIG_NO_HZ_IDLE=y$/m.test(config)) return null;
  const hz = Number(/^CONFIG_HZ=(\d+)$/m.exec(config)?.[1]);
  return hz >= 24 && hz <= 10_000 ? hz : null;
};

/** The running kernel's configuration: /boot/config-<release>, else /proc/config.gz. */
const kernelConfig = (procfsRoot: string, bootRoot: string): string | null => {
  const release = readText(join(procfsRoot, 'sys', 'kernel', 'osrelease'))?.trim();
  const boot = release && !release.includes('/') ? readText(join(bootRoot, `config-${release}`)) : null;
  if (boot) return boot;
  try {
    return gunzipSync(readFileSync(join(procfsRoot, 'config.gz'))).toString('latin1');
  } catch {
    return null;
  }
};

/**
 * Descriptors kept open for the idle states' counter files (up to 6 per state and CPU, kept-files.ts):
 * 64 CPUs of 4 states; a larger machine opens the rest at each read. The process reader keeps
 * up to 3 per process on top (task-bursts.ts).
 */
const MAX_KEPT_FILES = 1024;

export interface LinuxIdleReaderOptions {
  sysfsRoot: string;
  procfsRoot: string;
  /** Where the kernel's configuration file lies (config-<release>); default /boot. */
  bootRoot?: string;
}

export const createLinuxIdleReader = (o: LinuxIdleReaderOptions): IdleCounterReader => {
  const cpuRoot = join(o.sysfsRoot, 'devices', 'system', 'cpu');
  let layoutKey = '';
  let layout = new Map<number, StaticState[]>();
  // Read once, on the first read without a cpuidle driver (the only case that needs it).
  let busyTickHz: number | null | undefined;
  const readTasks = createTaskReader(o.procfsRoot);
  const files = createKeptFiles(MAX_KEPT_FILES);
  const read = (path: string) => files.read(path);
  return async (): Promise<IdleSnapshot> => {
    const atS = Number((read(join(o.procfsRoot, 'uptime')) ?? '').trim().split(/\s+/)[0]);
    const stat = parseProcStat(readText(join(o.procfsRoot, 'stat')) ?? '');
    const key = stat.map((c) => c.cpu).join(',');
    if (key !== layoutKey) {
      files.closeAll();
      layout = new Map(stat.map((c) => [c.cpu, readStaticStates(join(cpuRoot, `cpu${c.cpu}`))]));
      layoutKey = key;
    }
    const cpus: CpuCounters[] = stat.map((c) => ({
      cpu: c.cpu,
      busyUs: c.busyUs,
      idleUs: c.idleUs,
      totalUs: c.totalUs,
      states: (layout.get(c.cpu) ?? [])
        .map((s) => readStateCounters(s, read))
        .filter((s): s is StateCounters => s !== null),
      wakeups: null,
    }));
    const counted = cpus.some((c) => c.states.length > 0);
    if (!counted) {
      const irqs = parseInterrupts(readText(join(o.procfsRoot, 'interrupts')) ?? '');
      for (const c of cpus) c.wakeups = irqs.get(c.cpu) ?? null;
      if (busyTickHz === undefined)
        busyTickHz = busyTickHzOf(kernelConfig(o.procfsRoot, o.bootRoot ?? '/boot'));
    }
    return {
      source: counted ? 'cpuidle' : 'interrupts',
      ...(counted ? {} : { busyTickHz }),
      atS: Number.isFinite(atS) ? atS : 0,
      cpus,
      tasks: readTasks(),
    };
  };
};
