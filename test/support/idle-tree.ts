/**
 * A generated sysfs + procfs tree with the files the idle-counter reader reads (cpuidle states,
 * /proc/stat, /proc/uptime, /proc/interrupts), and a way to move its counters on as a workload
 * would: the tests and the read-cost perf script point the reader at it.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface TreeState {
  name: string;
  latency: number;
  /** Files left out, to reproduce a kernel that lacks them. */
  omit?: string[];
  extra?: Record<string, string>;
}

export interface CpuWork {
  busyTicks: number;
  idleTicks: number;
  /** Per state: entries and time (us). */
  states: { usage: number; timeUs: number; above?: number; below?: number }[];
  interrupts?: number;
}

export interface IdleTree {
  sysfs: string;
  procfs: string;
  /** Writes the counters: per CPU the totals since boot, and the uptime (s). */
  write(uptimeS: number, work: CpuWork[]): Promise<void>;
  cleanup(): Promise<void>;
}

export const makeIdleTree = async (root: string, cpus: number, states: TreeState[]): Promise<IdleTree> => {
  const sysfs = join(root, 'sys');
  const procfs = join(root, 'proc');
  const cpuRoot = join(sysfs, 'devices', 'system', 'cpu');
  await mkdir(procfs, { recursive: true });
  await mkdir(join(cpuRoot, 'cpuidle'), { recursive: true });
  await writeFile(join(cpuRoot, 'cpuidle', 'current_driver'), states.length ? 'test_idle\n' : 'none\n');
  for (let c = 0; c < cpus; c++) {
    for (const [i, s] of states.entries()) {
      const dir = join(cpuRoot, `cpu${c}`, 'cpuidle', `state${i}`);
      await mkdir(dir, { recursive: true });
      const files: Record<string, string> = {
        name: s.name,
        desc: s.name,
        latency: String(s.latency),
        residency: String(s.latency * 3),
        disable: '0',
        ...s.extra,
      };
      for (const [f, v] of Object.entries(files))
        if (!s.omit?.includes(f)) await writeFile(join(dir, f), `${v}\n`);
    }
    if (!states.length) await mkdir(join(cpuRoot, `cpu${c}`), { recursive: true });
  }
  const write = async (uptimeS: number, work: CpuWork[]) => {
    const line = (label: string, busy: number, idle: number) => `${label} ${busy} 0 0 ${idle} 0 0 0 0 0 0`;
    const sumBusy = work.reduce((n, w) => n + w.busyTicks, 0);
    const sumIdle = work.reduce((n, w) => n + w.idleTicks, 0);
    await writeFile(
      join(procfs, 'stat'),
      [
        line('cpu ', sumBusy, sumIdle),
        ...work.map((w, c) => line(`cpu${c}`, w.busyTicks, w.idleTicks)),
        'intr 0',
        'ctxt 0',
        '',
      ].join('\n'),
    );
    await writeFile(join(procfs, 'uptime'), `${uptimeS.toFixed(2)} 0.00\n`);
    await writeFile(
      join(procfs, 'interrupts'),
      `${work.map((_, c) => `CPU${c}`.padStart(11)).join('')}\n LOC: ${work.map((w) => String(w.interrupts ?? 0).padStart(10)).join(' ')}   Local timer interrupts\nERR:          0\n`,
    );
    for (const [c, w] of work.entries())
      for (const [i, s] of w.states.entries()) {
        const dir = join(cpuRoot, `cpu${c}`, 'cpuidle', `state${i}`);
        const omit = states[i]?.omit ?? [];
        const values: Record<string, number> = {
          usage: s.usage,
          time: s.timeUs,
          above: s.above ?? 0,
          below: s.below ?? 0,
        };
        for (const [f, v] of Object.entries(values))
          if (!omit.includes(f)) await writeFile(join(dir, f), `${v}\n`);
      }
  };
  return { sysfs, procfs, write, cleanup: () => rm(root, { recursive: true, force: true }) };
};
