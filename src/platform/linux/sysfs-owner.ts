/**
 * Plain cpufreq sysfs as the owner when no daemon is in charge. Plan ids (see docs/LINUX.md):
 * a governor name (`performance`, `schedutil`, `powersave`, ...) or, where the driver steers by
 * EPP (intel_pstate active, amd-pstate-epp), `performance` plus `<governor>:<epp>` such as
 * `powersave:balance_performance`. A change writes every CPU, is read back, and a CPU that refused
 * is named in the error. With no cpufreq at all the answer says who decides instead.
 */
import { PowerPlanError } from '../../domain/errors.ts';
import type { Note } from '../../domain/notes.ts';
import { eppKind, governorKind } from './kinds.ts';
import { type Candidate, notSettable, type OwnerView, planList } from './owner-view.ts';
import { type CpuFreq, common, cpuList, hasEpp, type SysfsIo, type SysfsState } from './sysfs.ts';
import type { VirtFacts } from './virt.ts';

const SEP = ':';

/** The plan id a CPU is in; null when it reports no governor. */
const cpuPlanId = (c: CpuFreq, epp: boolean): string | null => {
  if (!c.governor) return null;
  return epp && c.governor !== 'performance' && c.energyPreference
    ? `${c.governor}${SEP}${c.energyPreference}`
    : c.governor;
};

/** Values offered by every CPU, in the first CPU's order. */
const shared = (lists: readonly string[][]): string[] =>
  (lists[0] ?? []).filter((v) => lists.every((l) => l.includes(v)));

const candidateFor = (id: string, driver: string | null): Candidate => {
  const [governor, epp] = id.split(SEP) as [string, string | undefined];
  if (epp === undefined) {
    return {
      id,
      name: id,
      ...governorKind(governor, driver),
      description: `cpufreq governor ${governor} on every CPU (driver ${driver ?? 'unknown'})`,
    };
  }
  return {
    id,
    name: `${governor} + EPP ${epp}`,
    ...eppKind(epp),
    description: `cpufreq governor ${governor} with energy_performance_preference ${epp} on every CPU (driver ${driver ?? 'unknown'})`,
  };
};

export const sysfsCandidates = (s: SysfsState): Candidate[] => {
  const driver = common(s.cpus.map((c) => c.driver));
  const governors = shared(s.cpus.map((c) => c.governors));
  if (!hasEpp(s)) return governors.map((g) => candidateFor(g, driver));
  // `default` reads back as the value it stands for, so it cannot be a plan that reads back as itself.
  const epps = shared(s.cpus.map((c) => c.energyPreferences)).filter((e) => e !== 'default');
  return governors.flatMap((g) =>
    g === 'performance' ? [candidateFor(g, driver)] : epps.map((e) => candidateFor(`${g}${SEP}${e}`, driver)),
  );
};

/** Per-CPU plan ids grouped: "cpu0-1 performance, cpu2-3 powersave". */
const disagreement = (s: SysfsState, epp: boolean): string => {
  const groups = new Map<string, number[]>();
  for (const c of s.cpus) {
    const id = cpuPlanId(c, epp) ?? 'no governor';
    groups.set(id, [...(groups.get(id) ?? []), c.cpu]);
  }
  return [...groups].map(([id, cpus]) => `${cpuList(cpus)} ${id}`).join(', ');
};

export const activeSysfsId = (s: SysfsState): string | null =>
  common(s.cpus.map((c) => cpuPlanId(c, hasEpp(s))));

interface Refusal {
  cpu: number;
  file: string;
  code: string;
  message: string;
}

const errno = (e: unknown): string => (e as NodeJS.ErrnoException)?.code ?? 'EIO';

const rightsReason = (uid: number | undefined, readOnly: boolean): string =>
  readOnly
    ? '/sys is mounted read-only here (typically a container): run the service on the host or in a privileged container.'
    : `writing cpufreq sysfs needs root${uid !== undefined ? ` (this process runs as uid ${uid})` : ''}: run the service as root.`;

export interface SysfsViewOptions {
  state: SysfsState;
  io: SysfsIo;
  uid: number | undefined;
  reread: () => Promise<SysfsState>;
}

export const sysfsView = async ({ state, io, uid, reread }: SysfsViewOptions): Promise<OwnerView> => {
  const epp = hasEpp(state);
  const driver = common(state.cpus.map((c) => c.driver));
  const candidates = sysfsCandidates(state);
  const activeId = activeSysfsId(state);
  const notes: Note[] = [];
  const unlisted: Candidate | undefined =
    activeId === 'mixed'
      ? {
          id: 'mixed',
          name: 'mixed (CPUs disagree)',
          kind: 'custom',
          kindSource: 'default',
          rank: 0,
          builtin: false,
          description: disagreement(state, epp),
        }
      : activeId
        ? { ...candidateFor(activeId, driver), builtin: false }
        : undefined;
  if (activeId === 'mixed') {
    notes.push({
      code: 'cpus-disagree',
      text: `CPUs disagree: ${disagreement(state, epp)}. Setting a plan writes every CPU.`,
    });
  }
  if (driver === 'intel_cpufreq' && state.cpus.some((c) => c.governor === 'powersave')) {
    notes.push({
      code: 'passive-powersave',
      text:
        'intel_pstate runs in passive mode (intel_cpufreq): the powersave governor pins the minimum clock here, ' +
        'unlike active mode where powersave + EPP behaves like balanced.',
    });
  }

  const files = (c: CpuFreq) => [
    `${c.dir}/scaling_governor`,
    ...(epp ? [`${c.dir}/energy_performance_preference`] : []),
  ];
  const writable = await Promise.all(
    state.cpus.map(async (c) => (await Promise.all(files(c).map((f) => io.writable(f)))).every(Boolean)),
  );
  const locked = state.cpus.filter((_, i) => !writable[i]).map((c) => c.cpu);
  const cannotSetReason =
    locked.length === 0
      ? undefined
      : `${locked.length === state.cpus.length ? 'No CPU' : `${cpuList(locked)} of ${state.cpus.length} CPUs`} accepts writes: ${rightsReason(uid, uid === 0)}`;

  return {
    owner: 'sysfs',
    plans: planList(candidates, activeId, unlisted),
    canSet: locked.length === 0,
    ...(cannotSetReason ? { cannotSetReason } : {}),
    notes,
    async set(planId) {
      if (!candidates.some((c) => c.id === planId)) throw notSettable(planId, candidates);
      const [governor, pref] = planId.split(SEP) as [string, string | undefined];
      const refused: Refusal[] = [];
      const write = async (c: CpuFreq, name: string, value: string) => {
        try {
          await io.write(`${c.dir}/${name}`, value);
          return true;
        } catch (e) {
          refused.push({ cpu: c.cpu, file: name, code: errno(e), message: (e as Error).message });
          return false;
        }
      };
      // Governor first: intel_pstate refuses an EPP other than `performance` under the performance governor.
      await Promise.all(
        state.cpus.map(async (c) => {
          if (c.governor !== governor && !(await write(c, 'scaling_governor', governor))) return;
          // A governor change restores the driver's saved EPP, so the EPP is written after one in any case.
          if (pref !== undefined && (c.energyPreference !== pref || c.governor !== governor))
            await write(c, 'energy_performance_preference', pref);
        }),
      );
      if (refused.length) throw refusal(planId, refused, state.cpus.length, uid);

      const after = await reread();
      const wrong = after.cpus.filter((c) => cpuPlanId(c, hasEpp(after)) !== planId);
      if (wrong.length) {
        throw new PowerPlanError(
          'os_error',
          `Wrote '${planId}' but ${wrong.map((c) => `cpu${c.cpu} reads back ${cpuPlanId(c, epp) ?? 'nothing'}`).join(', ')}` +
            ' (another tool may own these knobs).',
          { cpus: wrong.map((c) => c.cpu) },
        );
      }
    },
  };
};

const refusal = (
  planId: string,
  refused: Refusal[],
  total: number,
  uid: number | undefined,
): PowerPlanError => {
  const cpus = [...new Set(refused.map((r) => r.cpu))];
  const rights = refused.every((r) => ['EACCES', 'EPERM', 'EROFS'].includes(r.code));
  const readOnly = refused.some((r) => r.code === 'EROFS');
  const what = refused
    .sort((a, b) => a.cpu - b.cpu)
    .map((r) => `cpu${r.cpu} ${r.file}: ${r.code}`)
    .join(', ');
  const partial =
    cpus.length < total
      ? ` The other ${total - cpus.length} CPU(s) switched, so CPUs now disagree; repeat the change once the cause is fixed.`
      : '';
  return new PowerPlanError(
    rights ? 'forbidden' : 'os_error',
    `Could not switch ${cpuList(cpus)} (of ${total} CPUs) to '${planId}' (${what}).${partial}` +
      (rights ? ` Missing right: ${rightsReason(uid, readOnly)}` : ''),
    { refused, ...(rights ? { right: readOnly ? 'writable /sys' : 'root' } : {}) },
  );
};

/** Why nothing can be set when the kernel exposes no usable cpufreq, and who decides instead. */
export const noControlsView = (state: SysfsState, virt: VirtFacts): OwnerView | null => {
  const driver = common(state.cpus.map((c) => c.driver));
  const base = { plans: [], canSet: false, notes: [] };
  const refuse = (reason: string) => async () => {
    throw new PowerPlanError('unsupported', reason);
  };
  if (driver === 'pcc-cpufreq') {
    const reason =
      'firmware-controlled (pcc-cpufreq): the platform firmware sets the CPU clock through ACPI PCC; change the ' +
      "BIOS/UEFI power profile (e.g. 'OS control' or maximum performance) instead.";
    return { ...base, owner: 'firmware', cannotSetReason: reason, set: refuse(reason) };
  }
  if (state.cpus.length > 0 && sysfsCandidates(state).length > 0) return null;
  const missing =
    state.cpus.length === 0
      ? `this system exposes no cpufreq controls (no ${state.root.replace(/\/$/, '')}/devices/system/cpu/cpu0/cpufreq)`
      : `the cpufreq driver ${driver ?? 'in use'} offers no governors`;
  const inContainer = virt.container ? `container (${virt.container}) ` : '';
  if (virt.vm) {
    const reason =
      `virtual machine detected (${virt.vm === 'unknown' ? 'hypervisor flag' : virt.vm})${inContainer ? `, inside a ${inContainer.trim()}` : ''}: ` +
      `the hypervisor host's power policy decides the CPU clock and ${missing}. Change the host's power plan and ` +
      'BIOS power settings instead.';
    return { ...base, owner: 'hypervisor', cannotSetReason: reason, set: refuse(reason) };
  }
  const reason =
    `${inContainer ? `running in a ${inContainer}and ` : ''}${missing}: no cpufreq driver is loaded, or the firmware ` +
    "keeps control of the CPU clock (BIOS power management not set to 'OS control').";
  return { ...base, owner: 'none', cannotSetReason: reason, set: refuse(reason) };
};
