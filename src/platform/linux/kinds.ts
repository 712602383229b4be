/**
 * What each Linux plan does, independent of its name: tuned profiles, power-profiles-daemon
 * profiles, cpufreq governors and governor + EPP pairs mapped onto the common plan kinds, with a
 * rank that orders plans within a kind (the first of a kind answers a kind alias).
 */
import type { Plan, PlanKind } from '../../domain/schemas.ts';
import { powersaveIsBalanced } from './sysfs.ts';

export interface Kinded {
  kind: PlanKind;
  kindSource: NonNullable<Plan['kindSource']>;
  /** Order within the kind: lower comes first. */
  rank: number;
  builtin: boolean;
}

const known = (kind: PlanKind, rank: number): Kinded => ({
  kind,
  kindSource: 'profile-name',
  rank,
  builtin: true,
});

/**
 * Profiles shipped with tuned and its profile packages. Most server profiles (virtual-guest,
 * virtual-host, aws, mssql, postgresql, oracle, sap-*) include throughput-performance, so they are
 * high-performance CPU-wise; overlays that do not touch the CPU policy (intel-sst,
 * optimize-serial-console, spindown-disk) are custom.
 */
const tunedProfiles: Record<string, Kinded> = {
  'throughput-performance': known('high-performance', 0),
  'latency-performance': known('high-performance', 1),
  'network-latency': known('high-performance', 2),
  'network-throughput': known('high-performance', 3),
  'accelerator-performance': known('high-performance', 4),
  'hpc-compute': known('high-performance', 5),
  'cpu-partitioning': known('high-performance', 6),
  realtime: known('high-performance', 7),
  'virtual-host': known('high-performance', 8),
  'virtual-guest': known('high-performance', 9),
  aws: known('high-performance', 10),
  mssql: known('high-performance', 11),
  postgresql: known('high-performance', 12),
  oracle: known('high-performance', 13),
  'sap-hana': known('high-performance', 14),
  'sap-netweaver': known('high-performance', 15),
  balanced: known('balanced', 0),
  desktop: known('balanced', 1),
  'balanced-battery': known('balanced', 2),
  powersave: known('power-saver', 0),
  'server-powersave': known('power-saver', 1),
  'laptop-battery-powersave': known('power-saver', 2),
  'laptop-ac-powersave': known('power-saver', 3),
  'intel-sst': known('custom', 0),
  'optimize-serial-console': known('custom', 1),
  'spindown-disk': known('custom', 2),
};

/** A user's own profile: classified by the words in its name when they are telling, else custom. */
const byName = (name: string): Kinded => {
  const kind: PlanKind = /performance|latency|throughput/.test(name)
    ? 'high-performance'
    : /powersave|power-saver/.test(name)
      ? 'power-saver'
      : /balanced/.test(name)
        ? 'balanced'
        : 'custom';
  return { kind, kindSource: kind === 'custom' ? 'default' : 'profile-name', rank: 100, builtin: false };
};

export const tunedKind = (name: string): Kinded => tunedProfiles[name] ?? byName(name);

const ppdProfiles: Record<string, Kinded> = {
  performance: known('high-performance', 0),
  balanced: known('balanced', 0),
  'power-saver': known('power-saver', 0),
};

export const ppdKind = (name: string): Kinded => ppdProfiles[name] ?? byName(name);

/** A cpufreq governor; `powersave` depends on the driver (see `powersaveIsBalanced`). */
export const governorKind = (governor: string, driver: string | null): Kinded => {
  switch (governor) {
    case 'performance':
      return known('high-performance', 0);
    case 'schedutil':
      return known('balanced', 0);
    case 'ondemand':
      return known('balanced', 1);
    case 'powersave':
      return powersaveIsBalanced(driver)
        ? { ...known('balanced', 2), kindSource: 'settings' }
        : known('power-saver', 0);
    case 'conservative':
      return known('balanced', 3);
    default:
      // userspace and out-of-tree governors: nothing to say about what they do
      return { kind: 'custom', kindSource: 'default', rank: 100, builtin: true };
  }
};

/** The `powersave` governor with an energy_performance_preference: the EPP decides. */
export const eppKind = (epp: string): Kinded => {
  const settings = (kind: PlanKind, rank: number): Kinded => ({
    ...known(kind, rank),
    kindSource: 'settings',
  });
  switch (epp) {
    case 'performance':
      return settings('high-performance', 1);
    case 'balance_performance':
      return settings('balanced', 0);
    case 'balance_power':
      return settings('balanced', 1);
    case 'power':
      return settings('power-saver', 0);
    default:
      return { kind: 'custom', kindSource: 'default', rank: 100, builtin: false };
  }
};

const kindOrder: readonly PlanKind[] = [
  'ultimate-performance',
  'high-performance',
  'balanced',
  'power-saver',
  'custom',
];

/** Plans grouped by kind, each kind in preference order; ties keep the owner's own order. */
export const byPreference = <T extends { kind: PlanKind; rank: number }>(plans: readonly T[]): T[] =>
  plans
    .map((p, i) => ({ p, i }))
    .sort(
      (a, b) => kindOrder.indexOf(a.p.kind) - kindOrder.indexOf(b.p.kind) || a.p.rank - b.p.rank || a.i - b.i,
    )
    .map(({ p }) => p);

/**
 * EPP as a 0 (performance) .. 100 (energy) percentage like Windows PERFEPP: the kernel's named
 * values are the HWP byte values 0, 128, 192 and 255; a raw number is the HWP byte itself.
 */
export const eppPercent = (epp: string | null): number | null => {
  if (epp === null) return null;
  const named: Record<string, number> = {
    performance: 0,
    balance_performance: 128,
    balance_power: 192,
    power: 255,
  };
  const raw = named[epp] ?? (/^\d+$/.test(epp) ? Number(epp) : null);
  return raw === null || raw > 255 ? null : Math.round((raw / 255) * 100);
};
