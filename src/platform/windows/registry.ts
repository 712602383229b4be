/**
 * The few registry values the Windows backend reads, through `reg query` (run by the one command
 * wrapper, never a shell): the group policy that pins the active scheme, the OEM code page of
 * console output and the firmware vendor strings that reveal a virtual machine. A value that
 * cannot be read is "unknown", never an error: the backend answers without it and says so.
 */
import type { Virtualization } from '../../domain/schemas.ts';
import type { RunFn } from '../../lib/run-command.ts';
import { asUtf8, codepageEncoding, DEFAULT_OEM_CODEPAGE, decodeCodepage } from './decode.ts';
import { normalizeGuid, parseChcp, parseRegValues } from './parse.ts';

/** Group policy "Select an active power plan" writes `ActivePowerScheme` here. */
export const POLICY_KEY = 'HKLM\\SOFTWARE\\Policies\\Microsoft\\Power\\PowerSettings';
export const POLICY_VALUE = 'ActivePowerScheme';
export const CODEPAGE_KEY = 'HKLM\\SYSTEM\\CurrentControlSet\\Control\\Nls\\CodePage';
export const BIOS_KEY = 'HKLM\\HARDWARE\\DESCRIPTION\\System\\BIOS';

export type RegistryRead =
  | { state: 'values'; values: Record<string, string> }
  | { state: 'absent' }
  | { state: 'unknown'; reason: string };

export type PolicyState =
  | { state: 'set'; schemeId: string }
  | { state: 'absent' }
  | { state: 'unknown'; reason: string };

export interface RegistryOptions {
  run: RunFn;
  /** reg.exe; null when the registry is not to be read (e.g. the backend runs off Windows). */
  regPath: string | null;
  /** chcp.com, asked for the code page only when the registry did not answer. */
  chcpPath: string | null;
  timeoutMs: number;
}

/** Names and values are ASCII, so the code page does not matter here (and must not recurse). */
const text = (bytes: Buffer): string => asUtf8(bytes) ?? decodeCodepage(bytes, DEFAULT_OEM_CODEPAGE);

export const createRegistry = ({ run, regPath, chcpPath, timeoutMs }: RegistryOptions) => {
  const query = async (key: string, value?: string): Promise<RegistryRead> => {
    if (!regPath) return { state: 'unknown', reason: 'the registry is not read on this system' };
    try {
      const r = await run(regPath, ['query', key, ...(value ? ['/v', value] : [])], { timeoutMs });
      // reg exits 1 for a missing key or value; the values themselves are the proof of presence.
      if (r.exitCode !== 0) return { state: 'absent' };
      return { state: 'values', values: parseRegValues(text(r.stdout)) };
    } catch (e) {
      return { state: 'unknown', reason: `reg query ${key} failed: ${(e as Error).message}` };
    }
  };

  const policy = async (): Promise<PolicyState> => {
    const r = await query(POLICY_KEY, POLICY_VALUE);
    if (r.state !== 'values') return r;
    const schemeId = normalizeGuid(r.values[POLICY_VALUE] ?? '');
    return schemeId ? { state: 'set', schemeId } : { state: 'absent' };
  };

  /** OEMCP from the registry, else what chcp says, else null. */
  const oemCodepage = async (): Promise<number | null> => {
    const r = await query(CODEPAGE_KEY, 'OEMCP');
    const fromRegistry = r.state === 'values' ? Number(r.values.OEMCP) : Number.NaN;
    if (Number.isInteger(fromRegistry) && codepageEncoding(fromRegistry)) return fromRegistry;
    if (!chcpPath) return null;
    try {
      const c = await run(chcpPath, [], { timeoutMs });
      const cp = c.exitCode === 0 ? parseChcp(text(c.stdout)) : null;
      return cp && codepageEncoding(cp) ? cp : null;
    } catch {
      return null;
    }
  };

  const virtualization = async (): Promise<Virtualization> => {
    const r = await query(BIOS_KEY);
    if (r.state !== 'values') return { detected: false, kind: null };
    return virtualizationFromFirmware(
      `${r.values.SystemManufacturer ?? ''} ${r.values.SystemProductName ?? ''} ${r.values.BIOSVendor ?? ''}`,
    );
  };

  return { query, policy, oemCodepage, virtualization };
};

export type Registry = ReturnType<typeof createRegistry>;

/** Firmware vendor strings of the common hypervisors, named as systemd-detect-virt names them. */
const hypervisors: [RegExp, string][] = [
  [/vmware/i, 'vmware'],
  [/qemu|kvm|bochs/i, 'kvm'],
  [/xen/i, 'xen'],
  [/innotek|virtualbox/i, 'oracle'],
  [/amazon ec2/i, 'amazon'],
  [/google compute engine/i, 'google'],
  [/parallels/i, 'parallels'],
  [/microsoft corporation.*virtual machine/i, 'microsoft'],
];

export const virtualizationFromFirmware = (firmware: string): Virtualization => {
  const hit = hypervisors.find(([re]) => re.test(firmware));
  return hit ? { detected: true, kind: hit[1] } : { detected: false, kind: null };
};
