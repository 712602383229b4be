/**
 * Builds Linux backends for tests: sysfs trees (fixture copies or trees written here) in temp
 * dirs; tuned's files (its /etc/tuned, profile directories, pid file and the /proc entry of a
 * "running" daemon) in the same tree; a private D-Bus with a power-profiles-daemon stand-in
 * (test/support/fake-ppd.ts); the tuned-adm / powerprofilesctl emulators on a private PATH for
 * changes; and sysfs writes that can be made to refuse (tests may run as root, where file modes
 * refuse nothing).
 */
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runCommand } from '../../../src/lib/run-command.ts';
import { createLinuxBackend, type LinuxBackendOptions } from '../../../src/platform/linux/linux-backend.ts';
import { defaultSysfsIo, type SysfsIo } from '../../../src/platform/linux/sysfs.ts';
import { type FakePpd, startBus, startFakePpd } from '../../support/fake-ppd.ts';

const here = import.meta.dirname;
export const fixtures = resolve(here, '../../fixtures');
const emulators = resolve(here, '../../emulators');

/** A sysfs tree as relative path -> content (a trailing newline is added like the kernel does). */
export type Tree = Record<string, string>;

export const cpufreqTree = (
  cpus: number,
  per: (cpu: number) => Record<string, string>,
  extra: Tree = {},
): Tree => {
  const tree: Tree = { ...extra };
  for (let i = 0; i < cpus; i++) {
    for (const [k, v] of Object.entries(per(i))) tree[`devices/system/cpu/cpu${i}/cpufreq/${k}`] = v;
  }
  return tree;
};

export const writeTree = async (root: string, tree: Tree) => {
  for (const [rel, content] of Object.entries(tree)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `${content}\n`);
  }
};

export const readTreeFile = async (root: string, rel: string) =>
  (await readFile(join(root, rel), 'utf8')).trim();

/** Writes to paths matching `refuse` fail with `code`, like the kernel refusing a non-root writer. */
export const refusingIo = (refuse: RegExp, code = 'EACCES'): SysfsIo => ({
  write: async (path, value) => {
    if (refuse.test(path)) {
      throw Object.assign(new Error(`${code}: permission denied, open '${path}'`), { code });
    }
    await defaultSysfsIo.write(path, value);
  },
  writable: async (path) => !refuse.test(path),
});

export interface TunedState {
  daemon?: 'running' | 'stopped';
  authorized?: boolean;
  active: string | null;
  profiles: { name: string; description?: string }[];
  /** How long each tuned-adm run takes, in ms (a slow daemon). */
  delayMs?: number;
  /** Options of a profile that tuned warns about and ignores (option, plugin class). */
  ignoredOptions?: Record<string, [string, string][]>;
  /** What `tuned-adm verify` finds changed back. */
  notSticking?: { name: string; got: string; expected: string; device?: string }[];
}

export interface PpdState {
  daemon?: 'running' | 'stopped';
  format: 'old' | 'new';
  authorized?: boolean;
  busy?: boolean;
  active: string;
  profiles: { name: string; cpuDriver?: string; platformDriver?: string; degraded?: string }[];
  action?: string;
  delayMs?: number;
}

export interface Setup {
  /** A fixture tree under test/fixtures/linux-sysfs (copied), or a tree written here. */
  sysfs?: { fixture: string } | { tree: Tree };
  tuned?: TunedState;
  ppd?: PpdState;
  io?: SysfsIo;
  /** Contents of <procfs>/cpuinfo. */
  cpuinfo?: string;
  uid?: number;
}

/** The pid written to the fixture's tuned pid file, with a /proc entry when the daemon "runs". */
export const TUNED_PID = 4242;

/** One emulator run as logged through EMU_TIMING_LOG. */
export interface ToolRun {
  tool: string;
  args: string[];
  start: number;
  end: number;
}

/** The largest number of runs that were under way at the same moment. */
export const maxOverlap = (runs: readonly ToolRun[]): number => {
  // Ends sort before starts at the same millisecond: a run that ended as another started did not overlap.
  const events = runs
    .flatMap((r) => [
      { t: r.start, d: 1 },
      { t: r.end, d: -1 },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let max = 0;
  for (const e of events) {
    now += e.d;
    max = Math.max(max, now);
  }
  return max;
};

export interface Built {
  backend: ReturnType<typeof createLinuxBackend>;
  dir: string;
  sysfsRoot: string;
  /** argv of every emulator call, per tool. */
  calls: (tool: 'tuned-adm' | 'powerprofilesctl') => Promise<string[][]>;
  /** Every emulator run with its start and end time. */
  runs: () => Promise<ToolRun[]>;
  /** The power-profiles-daemon stand-in, when `ppd` was given with a running daemon. */
  ppd: FakePpd | undefined;
  cleanup: () => Promise<void>;
  options: LinuxBackendOptions;
}

export const build = async (setup: Setup = {}): Promise<Built> => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-linux-'));
  const sysfsRoot = join(dir, 'sys');
  const procfsRoot = join(dir, 'proc');
  const bin = join(dir, 'bin');
  await mkdir(sysfsRoot, { recursive: true });
  await mkdir(procfsRoot, { recursive: true });
  await mkdir(bin, { recursive: true });
  if (setup.sysfs && 'fixture' in setup.sysfs) {
    await cp(join(fixtures, 'linux-sysfs', setup.sysfs.fixture), sysfsRoot, { recursive: true });
  } else if (setup.sysfs) {
    await writeTree(sysfsRoot, setup.sysfs.tree);
  }
  if (setup.cpuinfo) await writeFile(join(procfsRoot, 'cpuinfo'), setup.cpuinfo);

  const timingLog = join(dir, 'runs.jsonl');
  const env: Record<string, string> = { EMU_TIMING_LOG: timingLog };
  const emulator = async (tool: 'tuned-adm' | 'powerprofilesctl', state: object, variable: string) => {
    const statePath = join(dir, `${tool}.json`);
    await writeFile(statePath, JSON.stringify(state));
    // A wrapper with node's absolute path, so the private PATH needs nothing else on it.
    const wrapper = join(bin, tool);
    await writeFile(
      wrapper,
      `#!/bin/sh\nexec "${process.execPath}" "${join(emulators, `${tool}.mjs`)}" "$@"\n`,
    );
    await chmod(wrapper, 0o755);
    env[variable] = statePath;
  };
  const tunedLog = join(dir, 'tuned.log');
  const etcTuned = join(dir, 'etc', 'tuned');
  const ppdService = join(dir, 'share', 'net.hadess.PowerProfiles.service');
  if (setup.tuned) {
    const activeFile = join(etcTuned, 'active_profile');
    await emulator('tuned-adm', { ...setup.tuned, log: tunedLog, activeFile }, 'TUNED_ADM_EMU_STATE');
    const running = setup.tuned.daemon !== 'stopped';
    await writeTree(dir, {
      'etc/tuned/tuned-main.conf': 'daemon = 1',
      'etc/tuned/active_profile': setup.tuned.active ?? '',
      'etc/tuned/profile_mode': 'manual',
      'run/tuned/tuned.pid': String(TUNED_PID),
      ...(running ? { [`proc/${TUNED_PID}/cmdline`]: '/usr/bin/python3\0-Es\0/usr/sbin/tuned\0-l\0-P' } : {}),
      ...Object.fromEntries(
        setup.tuned.profiles.map((p) => [
          `usr/lib/tuned/${p.name}/tuned.conf`,
          `[main]\n${p.description ? `summary=${p.description}\n` : ''}`,
        ]),
      ),
    });
  }
  let ppd: FakePpd | undefined;
  let stopBus: (() => Promise<void>) | undefined;
  const busSocket = join(dir, 'bus');
  if (setup.ppd) {
    await emulator('powerprofilesctl', setup.ppd, 'PPD_EMU_STATE');
    await writeTree(dir, { 'share/net.hadess.PowerProfiles.service': '[D-BUS Service]' });
    const bus = await startBus(dir);
    stopBus = bus.stop;
    if (setup.ppd.daemon !== 'stopped') ppd = await startFakePpd(bus.socket, env.PPD_EMU_STATE!);
  }

  const options: LinuxBackendOptions = {
    sysfsRoot,
    procfsRoot,
    path: bin,
    containerMarkers: [],
    tunedLog,
    tuned: {
      etcDir: etcTuned,
      profileDirs: [join(dir, 'usr', 'lib', 'tuned'), etcTuned],
      pidFile: join(dir, 'run', 'tuned', 'tuned.pid'),
      procfsRoot: join(dir, 'proc'),
    },
    ppd: { busSocket, installed: [ppdService] },
    run: (file, args, opts = {}) => runCommand(file, args, { ...opts, env: { ...opts.env, ...env } }),
    ...(setup.io ? { io: setup.io } : {}),
    ...(setup.uid !== undefined ? { uid: setup.uid } : {}),
  };
  return {
    backend: createLinuxBackend(options),
    dir,
    sysfsRoot,
    options,
    ppd,
    calls: async (tool) => {
      const log = await readFile(join(dir, `${tool}.json.argv.jsonl`), 'utf8').catch(() => '');
      return log
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as string[]);
    },
    runs: async () =>
      (await readFile(timingLog, 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as ToolRun),
    cleanup: async () => {
      ppd?.stop();
      await stopBus?.();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

/** Runs `fn` on a backend built from `setup`, and cleans it up whatever `fn` does. */
export const using = async (setup: Setup, fn: (b: Built) => Promise<void>) => {
  const b = await build(setup);
  try {
    await fn(b);
  } finally {
    await b.cleanup();
  }
};

/** The profiles of the captured `tuned-adm list` (Rocky Linux VM). */
export const rockyTunedProfiles = async (): Promise<TunedState['profiles']> => {
  const text = await readFile(
    join(fixtures, 'linux-tuned', 'rocky-tuned-adm-list-virtual-guest.txt'),
    'utf8',
  );
  return text
    .split('\n')
    .map((l) => /^- (\S+)\s+- (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[1]!, description: m[2]! }));
};

/** An intel_pstate (active, HWP) machine: governor + EPP on every CPU. */
export const intelPstateTree = (cpus = 4, governor = 'powersave', epp = 'balance_performance'): Tree =>
  cpufreqTree(
    cpus,
    () => ({
      scaling_driver: 'intel_pstate',
      scaling_governor: governor,
      scaling_available_governors: 'performance powersave',
      energy_performance_preference: governor === 'performance' ? 'performance' : epp,
      energy_performance_available_preferences:
        'default performance balance_performance balance_power power ',
      scaling_min_freq: '800000',
      scaling_max_freq: '4000000',
      cpuinfo_min_freq: '800000',
      cpuinfo_max_freq: '4000000',
    }),
    {
      'devices/system/cpu/intel_pstate/status': 'active',
      'devices/system/cpu/intel_pstate/no_turbo': '0',
      'devices/system/cpu/intel_pstate/min_perf_pct': '20',
      'devices/system/cpu/intel_pstate/max_perf_pct': '100',
    },
  );
