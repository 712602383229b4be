/**
 * Facts about the machine that decide how much the guest's power policy matters: virtualization
 * (systemd-detect-virt, DMI vendor strings, the `hypervisor` CPU flag, container markers) and the
 * power source (/sys/class/power_supply).
 */
import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PowerSource } from '../../domain/schemas.ts';
import type { RunFn } from '../../lib/run-command.ts';
import { readAttr } from './sysfs.ts';

export interface VirtFacts {
  /** Hypervisor kind (kvm, vmware, microsoft, ...), 'unknown' when only the CPU flag says so. */
  vm: string | null;
  /** Container kind (docker, podman, lxc, ...). */
  container: string | null;
}

export interface VirtSources {
  sysfsRoot: string;
  procfsRoot: string;
  containerMarkers: readonly { path: string; kind: string }[];
  /** Runs systemd-detect-virt with the given flag; null when the command is unavailable. */
  detectVirt: (flag: '--vm' | '--container') => Promise<string | null>;
}

/** DMI sys_vendor / product_name words -> systemd-detect-virt's names. */
const dmiVendors: [RegExp, string][] = [
  [/^KVM|KVM$/, 'kvm'],
  [/QEMU/, 'qemu'],
  [/VMware/, 'vmware'],
  [/^Microsoft Corporation/, 'microsoft'],
  [/innotek|VirtualBox/, 'oracle'],
  [/^Xen/, 'xen'],
  [/^Amazon EC2/, 'amazon'],
  [/^Google/, 'google'],
  [/Parallels/, 'parallels'],
  [/^BHYVE/, 'bhyve'],
  [/^OpenStack/, 'kvm'],
];

const fromDmi = async (sysfsRoot: string): Promise<string | null> => {
  const dir = join(sysfsRoot, 'class', 'dmi', 'id');
  const [vendor, product] = await Promise.all([
    readAttr(join(dir, 'sys_vendor')),
    readAttr(join(dir, 'product_name')),
  ]);
  // A Microsoft vendor alone is a Surface laptop; only "Virtual Machine" makes it Hyper-V.
  if (vendor?.startsWith('Microsoft') && product !== 'Virtual Machine') return null;
  for (const text of [product, vendor]) {
    if (!text) continue;
    const hit = dmiVendors.find(([re]) => re.test(text));
    if (hit) return hit[1];
  }
  return null;
};

const hasHypervisorFlag = async (procfsRoot: string): Promise<boolean> => {
  const cpuinfo = await readAttr(join(procfsRoot, 'cpuinfo'));
  return cpuinfo !== null && /^flags\s*:.*\bhypervisor\b/m.test(cpuinfo);
};

export const detectVirtualization = async (src: VirtSources): Promise<VirtFacts> => {
  const [vmTool, containerTool] = await Promise.all([src.detectVirt('--vm'), src.detectVirt('--container')]);
  const vm =
    vmTool ??
    (await fromDmi(src.sysfsRoot)) ??
    ((await hasHypervisorFlag(src.procfsRoot)) ? 'unknown' : null);
  let container = containerTool;
  for (const marker of src.containerMarkers) {
    if (container) break;
    if (
      await access(marker.path).then(
        () => true,
        () => false,
      )
    )
      container = marker.kind;
  }
  return { vm, container };
};

/** systemd-detect-virt prints the kind and exits 0, or prints "none" and exits 1. */
export const systemdDetectVirt =
  (run: RunFn, file: string, env: Record<string, string> | undefined) =>
  async (flag: '--vm' | '--container'): Promise<string | null> => {
    try {
      const r = await run(file, [flag], { timeoutMs: 5000, ...(env ? { env } : {}) });
      const kind = r.stdout.toString('utf8').trim();
      return r.exitCode === 0 && kind && kind !== 'none' ? kind : null;
    } catch {
      return null;
    }
  };

/** Mains online -> ac; a discharging battery (or mains reported offline) -> battery; nothing -> unknown. */
export const detectPowerSource = async (sysfsRoot: string): Promise<PowerSource> => {
  const dir = join(sysfsRoot, 'class', 'power_supply');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 'unknown';
  }
  const supplies = await Promise.all(
    names.map(async (n) => ({
      type: await readAttr(join(dir, n, 'type')),
      online: await readAttr(join(dir, n, 'online')),
      status: await readAttr(join(dir, n, 'status')),
    })),
  );
  const mains = supplies.filter((s) => s.type === 'Mains');
  if (mains.some((s) => s.online === '1')) return 'ac';
  if (supplies.some((s) => s.type === 'Battery' && s.status === 'Discharging')) return 'battery';
  if (mains.length > 0 && mains.every((s) => s.online === '0')) return 'battery';
  return 'unknown';
};
