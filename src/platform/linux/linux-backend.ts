/**
 * The Linux PowerBackend: finds who owns the CPU power policy (tuned, then power-profiles-daemon or
 * a compatible daemon, then plain cpufreq sysfs, or nobody: hypervisor / firmware), answers with
 * that owner's plans and changes them through it. Processor settings always come from sysfs, which
 * is what is in force whoever wrote it. Every call looks afresh (owners start and stop) without
 * starting a program: tuned from its files (tuned-state.ts), power-profiles-daemon from its D-Bus
 * properties, kept until it signals a change (ppd-bus.ts); systemd-detect-virt runs once per process.
 */
import { PowerPlanError } from '../../domain/errors.ts';
import { type Note, noteFields } from '../../domain/notes.ts';
import type { ActivePlan, Capabilities } from '../../domain/schemas.ts';
import { type RunFn, runCommand } from '../../lib/run-command.ts';
import type { BackendFacts, PowerBackend } from '../backend.ts';
import type { Commands, Runner } from './commands.ts';
import { linuxControl, readIdleStates } from './cpuidle.ts';
import { mergeEffective, sysfsEffective, tunedVerify } from './effective.ts';
import type { OwnerView } from './owner-view.ts';
import { probePpd } from './ppd.ts';
import { defaultPpdPaths, PpdBus, type PpdPaths } from './ppd-bus.ts';
import { processorSettings } from './settings.ts';
import { defaultSysfsIo, readSysfs, type SysfsIo, type SysfsState } from './sysfs.ts';
import { noControlsView, sysfsView } from './sysfs-owner.ts';
import { probeTuned, type TunedSource } from './tuned.ts';
import { defaultTunedPaths, type TunedPaths, TunedProfiles } from './tuned-state.ts';
import { detectPowerSource, detectVirtualization, systemdDetectVirt, type VirtFacts } from './virt.ts';

export interface LinuxBackendOptions {
  /** Where sysfs is mounted; a fixture tree in tests. Default /sys. */
  sysfsRoot?: string;
  /** Where procfs is mounted (for /proc/cpuinfo). Default /proc. */
  procfsRoot?: string;
  /** The search path for tuned-adm, powerprofilesctl and systemd-detect-virt; default: the service's PATH. */
  path?: string;
  /** Command names or absolute paths, overriding the defaults found on the search path. */
  commands?: Partial<Commands>;
  run?: RunFn;
  /** Sysfs writes; tests inject refusals. */
  io?: SysfsIo;
  /** The effective uid, for messages about missing rights. Default: this process's. */
  uid?: number;
  /** Files whose presence means "in a container". Default /.dockerenv (docker), /run/.containerenv (podman). */
  containerMarkers?: { path: string; kind: string }[];
  /** tuned's files (its /etc/tuned, profile directories, pid file); fixture trees in tests. */
  tuned?: Partial<TunedPaths>;
  /** power-profiles-daemon's system bus socket and installed-marker files. */
  ppd?: Partial<PpdPaths>;
  /** The PM QoS device read for the latency limit; default /dev/cpu_dma_latency with the real /sys, else none. */
  dmaLatencyPath?: string | null;
  /** tuned's log, read for the details of `tuned-adm verify`; default /var/log/tuned/tuned.log. */
  tunedLog?: string;
}

interface Inspection {
  state: SysfsState;
  virt: VirtFacts;
  view: OwnerView;
  notes: Note[];
}

const virtLabel = (v: VirtFacts): string | null =>
  v.vm && v.vm !== 'unknown' ? v.vm : (v.container ?? null);

export const createLinuxBackend = (options: LinuxBackendOptions = {}): PowerBackend => {
  const sysfsRoot = options.sysfsRoot ?? '/sys';
  const procfsRoot = options.procfsRoot ?? '/proc';
  const io = options.io ?? defaultSysfsIo;
  const uid = options.uid ?? process.getuid?.();
  const dmaLatencyPath =
    options.dmaLatencyPath !== undefined
      ? options.dmaLatencyPath
      : sysfsRoot === '/sys'
        ? '/dev/cpu_dma_latency'
        : null;
  const runner: Runner = {
    run: options.run ?? runCommand,
    env: options.path !== undefined ? { PATH: options.path } : undefined,
    files: {
      tunedAdm: 'tuned-adm',
      powerprofilesctl: 'powerprofilesctl',
      systemdDetectVirt: 'systemd-detect-virt',
      ...options.commands,
    },
  };

  const tunedPaths = { ...defaultTunedPaths(procfsRoot), ...options.tuned };
  const tuned: TunedSource = { paths: tunedPaths, profiles: new TunedProfiles(tunedPaths.profileDirs) };
  const ppd = new PpdBus({ ...defaultPpdPaths, ...options.ppd }, process.getuid?.() ?? 0);

  // Virtualization does not change while the service runs; look once.
  let virtFacts: Promise<VirtFacts> | undefined;
  const virt = () => {
    virtFacts ??= detectVirtualization({
      sysfsRoot,
      procfsRoot,
      containerMarkers: options.containerMarkers ?? [
        { path: '/.dockerenv', kind: 'docker' },
        { path: '/run/.containerenv', kind: 'podman' },
      ],
      detectVirt: systemdDetectVirt(runner.run, runner.files.systemdDetectVirt, runner.env),
    });
    return virtFacts;
  };

  const inspect = async (): Promise<Inspection> => {
    const [state, v] = await Promise.all([readSysfs(sysfsRoot), virt()]);
    const notes: Note[] = [];
    let view: OwnerView | undefined;
    for (const probe of [() => probeTuned(runner, tuned), () => probePpd(runner, ppd)]) {
      const found = await probe();
      if (found && 'view' in found) {
        view = found.view;
        break;
      }
      if (found) notes.push(found.note);
    }
    if (view && state.cpus.length === 0 && v.vm) {
      notes.push({
        code: 'vm-host-decides',
        text:
          `virtual machine detected (${virtLabel(v) ?? 'hypervisor flag'}): the ${view.owner} profile changes the guest's ` +
          "settings only; the hypervisor host's power policy decides the CPU clock.",
      });
    }
    view ??=
      noControlsView(state, v) ?? (await sysfsView({ state, io, uid, reread: () => readSysfs(sysfsRoot) }));
    if (view.owner === 'sysfs' && v.vm) {
      notes.push({
        code: 'vm-host-decides',
        text:
          `virtual machine detected (${virtLabel(v) ?? 'hypervisor flag'}): the guest's cpufreq settings may be ` +
          "advisory only; the hypervisor host's power policy decides the CPU clock.",
      });
    }
    return { state, virt: v, view, notes: [...view.notes, ...notes] };
  };

  return {
    name: 'linux',
    async capabilities(): Promise<Capabilities> {
      const { state, view } = await inspect();
      return {
        listPlans: view.plans.length > 0,
        setPlan: view.canSet,
        createPlan: false,
        processorSettings: state.cpus.length > 0,
      };
    },
    async listPlans() {
      return (await inspect()).view.plans;
    },
    async getActive(): Promise<ActivePlan> {
      const [{ state, view, notes, virt: v }, idle] = await Promise.all([
        inspect(),
        readIdleStates({ sysfsRoot, dmaLatencyPath }),
      ]);
      const control = await linuxControl(state, idle, v.vm ? (virtLabel(v) ?? 'hypervisor flag') : null);
      return {
        plan: view.plans.find((p) => p.active) ?? null,
        processor: processorSettings(state),
        owner: view.owner,
        policyManaged: false,
        canSet: view.canSet,
        ...(view.cannotSetReason ? { cannotSetReason: view.cannotSetReason } : {}),
        ...noteFields(notes),
        idle,
        control,
      };
    },
    async setActive(planId) {
      const { view } = await inspect();
      if (view.plans.length === 0) {
        throw new PowerPlanError(
          'unsupported',
          view.cannotSetReason ?? 'This system exposes no power plans.',
        );
      }
      try {
        await view.set(planId);
      } finally {
        // Even a failed switch may have changed something: the next read asks the daemon again.
        ppd.forget();
      }
    },
    async checkEffective(planId) {
      ppd.forget();
      const { state, view } = await inspect();
      const kind = view.plans.find((p) => p.id === planId)?.kind;
      const parts = [sysfsEffective(view.owner, planId, state, kind)];
      if (view.owner === 'tuned')
        parts.push(await tunedVerify(runner, options.tunedLog ?? '/var/log/tuned/tuned.log'));
      return mergeEffective(...parts);
    },
    async facts(): Promise<BackendFacts> {
      const [v, powerSource] = await Promise.all([virt(), detectPowerSource(sysfsRoot)]);
      return { virtualization: { detected: Boolean(v.vm || v.container), kind: virtLabel(v) }, powerSource };
    },
  };
};
