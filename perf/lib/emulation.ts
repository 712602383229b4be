/**
 * Emulated power plans for perf/workload.ts: a cgroup v1 `cpu` + `cpuacct` group (one directory
 * when the two controllers are mounted together, two when apart) whose CFS quota a small polling
 * controller (ramp-controller.ts, its own process, outside the group) lowers to a fraction of one
 * CPU after a stretch without usage and lifts after a stretch of busy time: a clock that falls
 * while the server waits and ramps up late once work arrives. The server goes inside the group,
 * its clients stay outside. The group has a high weight (cpu.shares of nice -20), so the quota,
 * not the neighbours, decides what it gets. Needs root.
 *
 * CFS hands out quota per period: work shorter than fraction x period runs at full speed in one
 * period. The plans here use the kernel's smallest quota, 1 ms, so every request of more than
 * about 1 ms of CPU is slowed.
 *
 * A quota slows by stopping: a throttled group's CPU idles until the next period, which the CPU's
 * counters would show as many short idle periods between short bursts. A slow clock keeps the CPU
 * busy, longer. So, unless told otherwise, a busy filler (slow-clock-filler.py, SCHED_IDLE, on the
 * CPU the emulation is started from) runs while the group is throttled: to the counters a slowed
 * burst is then one longer busy period, as under a clock.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMsOrZero, onCpu, repoRoot } from './processes.ts';

export interface EmulatedPlan {
  name: string;
  /**
   * The product's plan (the simulated backend's) this emulation stands for, set before its
   * benchmark and its runs: the product files each benchmark under it and, under the ramps, finds
   * the benchmark of no emulation as that of a performance plan.
   */
  asPlan: 'high-performance' | 'balanced' | 'power-saver';
  /** null: no emulation (the quota stays lifted; the controller polls alike but never lowers it). */
  ramp: null | {
    periodUs: number;
    lowPercent: number;
    /** With at most quietPercent of a CPU used over this long, the quota drops (the clock falls). */
    idleMs: number;
    /**
     * The share of one CPU (%) the group may use over idleMs for the quota to drop: a clock falls
     * at low utilisation, not only at none (ramp-controller.ts).
     */
    quietPercent: number;
    /** Busy this long, the quota returns to a full CPU (the clock has ramped up). */
    busyMs: number;
  };
}

export const PLANS: readonly EmulatedPlan[] = [
  { name: 'none', asPlan: 'high-performance', ramp: null },
  {
    name: 'slow ramp',
    asPlan: 'balanced',
    ramp: { periodUs: 2000, lowPercent: 50, idleMs: 20, quietPercent: 5, busyMs: 10 },
  },
  {
    name: 'slower ramp',
    asPlan: 'power-saver',
    ramp: { periodUs: 4000, lowPercent: 25, idleMs: 20, quietPercent: 5, busyMs: 40 },
  },
];

export interface ControllerCounts {
  drops: number;
  lifts: number;
  refalls: number;
  /** Runnable tasks charged between ticks (ramp-controller.ts), with the filler. */
  charges: number;
}

export const describePlan = (p: EmulatedPlan): string =>
  p.ramp
    ? `quota ${p.ramp.lowPercent}% of a CPU (${(p.ramp.periodUs * p.ramp.lowPercent) / 100000} ms per ${p.ramp.periodUs / 1000} ms period) after ${p.ramp.idleMs} ms with at most ${p.ramp.quietPercent}% of a CPU used, a full CPU after ${p.ramp.busyMs} ms busy`
    : 'no quota (the controller polls alike)';

const V1 = '/sys/fs/cgroup';

/** The v1 `cpu` root, and the `cpuacct` one (the same where the two are mounted together). */
export const v1Roots = (): { cpuRoot: string; acctRoot: string } => {
  const cpuRoot = join(V1, 'cpu');
  return { cpuRoot, acctRoot: existsSync(join(cpuRoot, 'cpuacct.usage')) ? cpuRoot : join(V1, 'cpuacct') };
};

export interface PlanGroup {
  usagePath: string;
  /** The group's cpu.stat (throttled_time: the time its quota held it back, ns). */
  statPath: string;
  /** Moves a process (all its threads) and every descendant it has now into the group. */
  adopt(pid: number): Promise<void>;
  /** Moves a process (and its descendants) back to the root groups. */
  release(pid: number): Promise<void>;
  /** CPU the group has used, ns. */
  usageNs(): Promise<number>;
  /** cpu.stat (nr_throttled > 0 proves the quota bit). */
  throttling(): Promise<{ nrThrottled: number; throttledMs: number }>;
  /** CPU used so far by the emulation's own processes running now (controller, filler), ms. */
  emulationCpuMs(): Promise<number>;
  /** CPU used so far by the busy filler running now, ms (0 without one). */
  fillerCpuMs(): Promise<number>;
  /**
   * Starts the plan's controller (or only lifts the quota for `none`); answers how to stop it, which
   * answers the controller's counts: quota dropped, lifted, and written again after a fallen
   * group's work (refalls, ramp-controller.ts).
   */
  apply(plan: EmulatedPlan): Promise<() => Promise<ControllerCounts>>;
  remove(): Promise<void>;
}

const children = async (pid: number): Promise<number[]> => {
  const out: number[] = [];
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const stat = await readFile(`/proc/${e}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) out.push(Number(e));
  }
  return out;
};

const descendants = async (pid: number): Promise<number[]> => {
  const direct = await children(pid);
  return [pid, ...(await Promise.all(direct.map(descendants))).flat()];
};

/** Spawns a helper and resolves once it prints `ready` (rejects if it exits first). */
const started = async (c: ChildProcess, what: string): Promise<() => string> => {
  let out = '';
  await new Promise<void>((res, rej) => {
    c.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('ready\n')) res();
    });
    c.once('exit', (code) => rej(new Error(`${what} exited with ${code}`)));
  });
  return () => out;
};

const stopped = async (c: ChildProcess): Promise<void> => {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise((res) => c.once('exit', res));
  c.kill('SIGTERM');
  await exited;
};

/**
 * `controllerCpu`: the CPU the plan's controller runs on (its polling kept off the workload's
 * CPU); `workloadCpu`: the CPU the busy filler keeps busy (else the caller's). `filler: false`
 * leaves the throttled CPU idle (the bare quota's stop-and-go).
 */
export const planGroup = async (
  name: string,
  controllerCpu?: number,
  { filler: withFiller = true, workloadCpu }: { filler?: boolean; workloadCpu?: number } = {},
): Promise<PlanGroup> => {
  const { cpuRoot, acctRoot } = v1Roots();
  if (!existsSync(join(cpuRoot, 'cpu.cfs_quota_us')) || !existsSync(join(acctRoot, 'cpuacct.usage')))
    throw new Error('needs cgroup v1 cpu and cpuacct controllers (cpu.cfs_quota_us, cpuacct.usage)');
  const roots = [...new Set([cpuRoot, acctRoot])];
  const cpuDir = join(cpuRoot, name);
  const acctDir = join(acctRoot, name);
  for (const r of roots) await mkdir(join(r, name), { recursive: true });
  await writeFile(join(cpuDir, 'cpu.shares'), '88761');
  await writeFile(join(cpuDir, 'cpu.cfs_quota_us'), '-1');
  const usagePath = join(acctDir, 'cpuacct.usage');
  const statPath = join(cpuDir, 'cpu.stat');
  const move = async (pid: number, into: boolean) => {
    for (const p of await descendants(pid))
      for (const r of roots)
        await writeFile(join(into ? join(r, name) : r, 'cgroup.procs'), String(p)).catch(() => undefined);
  };
  let controller: ChildProcess | undefined;
  let filler: ChildProcess | undefined;
  let removed = false;
  /** The filler's own cgroups (cpu): it fills in one without a quota, rests in one whose quota it used up. */
  const fillDir = join(cpuRoot, `${name}-fill`);
  const restDir = join(cpuRoot, `${name}-rest`);
  /** The directory of the FIFO the filler asks to rest through, while a plan with a filler is applied. */
  let fifoDir: string | undefined;
  return {
    usagePath,
    statPath,
    adopt: (pid) => move(pid, true),
    release: (pid) => move(pid, false),
    usageNs: async () => Number(await readFile(usagePath, 'utf8')),
    throttling: async () => {
      const s = await readFile(statPath, 'utf8');
      const n = (k: string) => Number(new RegExp(`^${k} (\\d+)`, 'm').exec(s)?.[1] ?? 0);
      return { nrThrottled: n('nr_throttled'), throttledMs: n('throttled_time') / 1e6 };
    },
    emulationCpuMs: async () => (await cpuMsOrZero(controller?.pid)) + (await cpuMsOrZero(filler?.pid)),
    fillerCpuMs: () => cpuMsOrZero(filler?.pid),
    apply: async (plan) => {
      // After remove(), a run going on (its cleanup on a signal runs beside it) starts nothing more.
      if (removed) throw new Error('the emulation has been removed');
      const r = plan.ramp;
      await writeFile(join(cpuDir, 'cpu.cfs_quota_us'), '-1');
      // No emulation still runs the controller, polling alike but never lowering the quota, so that
      // the machine around the workload is the same under every plan and only the quota differs
      // (a virtual CPU kept polling can change what the host gives the other).
      const policy = r ?? { periodUs: 100_000, lowPercent: 100, idleMs: 1e12, quietPercent: 0, busyMs: 0 };
      await writeFile(join(cpuDir, 'cpu.cfs_period_us'), String(policy.periodUs));
      let fillerProcs: string | undefined;
      let fillerFifo: string | undefined;
      let fillerList: string | undefined;
      if (withFiller && r) {
        await mkdir(fillDir, { recursive: true });
        await mkdir(restDir, { recursive: true });
        // The least weight (cpu.shares 2): beside the server's group (88761) and the clients a
        // filling filler is scheduled last, as SCHED_IDLE would be if groups knew of it.
        for (const d of [fillDir, restDir]) await writeFile(join(d, 'cpu.shares'), '2');
        await writeFile(join(restDir, 'cpu.cfs_period_us'), '1000000');
        await writeFile(join(restDir, 'cpu.cfs_quota_us'), '1000');
        fillerProcs = join(fillDir, 'cgroup.procs');
        // On tmpfs where there is one: the filler reads the group's task list from here, and reading
        // a file there never waits for a disk.
        fifoDir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), `${name}-filler-`));
        fillerFifo = join(fifoDir, 'rest');
        fillerList = join(fifoDir, 'tasks');
        await writeFile(fillerList, '');
        execFileSync('mkfifo', ['-m', '600', fillerFifo]);
        const script = join(import.meta.dirname, 'slow-clock-filler.py');
        const [fillerCmd, ...fillerRest] = onCpu(['python3', script, fillerFifo, fillerList], workloadCpu);
        const f = spawn(fillerCmd!, fillerRest, { stdio: ['ignore', 'pipe', 'inherit'] });
        filler = f;
        await started(f, 'the busy filler');
        await writeFile(join(restDir, 'cgroup.procs'), String(f.pid));
      }
      const args = {
        usagePath,
        statPath,
        quotaPath: join(cpuDir, 'cpu.cfs_quota_us'),
        pollUs: 250,
        ...policy,
        ...(fillerProcs && fillerFifo && fillerList && filler?.pid
          ? {
              filler: {
                pid: filler.pid,
                fill: fillerProcs,
                rest: join(restDir, 'cgroup.procs'),
                fifo: fillerFifo,
                list: fillerList,
              },
              tasks: join(cpuDir, 'tasks'),
              // With the filler the workload's CPU is busy whenever a task of the group is runnable,
              // so charging it between ticks never wakes an idle CPU.
              charge: true,
            }
          : {}),
      };
      // node --import tsx, not tsx's CLI: no relaying parent between the signal and the controller.
      const script = join(import.meta.dirname, 'ramp-controller.ts');
      const argv = [process.execPath, '--import', 'tsx', script, JSON.stringify(args)];
      const [cmd, ...rest] = onCpu(argv, controllerCpu);
      const c = spawn(cmd!, rest, {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      controller = c;
      const out = await started(c, 'the plan controller');
      if (removed) {
        c.kill('SIGKILL');
        filler?.kill('SIGKILL');
        throw new Error('the emulation has been removed');
      }
      return async () => {
        await stopped(c);
        controller = undefined;
        await writeFile(join(cpuDir, 'cpu.cfs_quota_us'), '-1');
        if (filler) {
          // A throttled filler takes its SIGTERM once it runs: out of its groups first.
          await writeFile(join(cpuRoot, 'cgroup.procs'), String(filler.pid)).catch(() => undefined);
          await stopped(filler);
        }
        filler = undefined;
        for (const d of [fillDir, restDir]) await rmdir(d).catch(() => undefined);
        if (fifoDir) await rm(fifoDir, { recursive: true, force: true });
        fifoDir = undefined;
        try {
          return JSON.parse(out().trim().split('\n').at(-1) ?? '') as ControllerCounts;
        } catch {
          return { drops: Number.NaN, lifts: Number.NaN, refalls: Number.NaN, charges: Number.NaN };
        }
      };
    },
    remove: async () => {
      removed = true;
      controller?.kill('SIGKILL');
      filler?.kill('SIGKILL');
      // Also after a plan whose controller never started: its filler's cgroup goes too.
      if (filler?.pid)
        await writeFile(join(cpuRoot, 'cgroup.procs'), String(filler.pid)).catch(() => undefined);
      for (const d of [fillDir, restDir]) await rmdir(d).catch(() => undefined);
      if (fifoDir) await rm(fifoDir, { recursive: true, force: true }).catch(() => undefined);
      await writeFile(join(cpuDir, 'cpu.cfs_quota_us'), '-1').catch(() => undefined);
      for (const r of roots) {
        const procs = (await readFile(join(r, name, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n');
        for (const p of procs.filter(Boolean))
          await writeFile(join(r, 'cgroup.procs'), p).catch(() => undefined);
        await rmdir(join(r, name)).catch(() => undefined);
      }
    },
  };
};
