/**
 * Pure parsers for the daemons' command output (tuned-adm, powerprofilesctl). Both tools print
 * English only, so keying on their fixed prefixes is safe; see test/fixtures/linux-tuned and
 * test/fixtures/linux-ppd for the captured outputs each grammar below was written against.
 */

export interface TunedProfile {
  name: string;
  description: string | null;
}

export interface TunedList {
  profiles: TunedProfile[];
  active: string | null;
}

/** `tuned-adm active`: "Current active profile: <name>" or "No current active profile." (null). */
export const parseTunedActive = (stdout: string): string | null => {
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^Current active profile:\s*(.+?)\s*$/.exec(line);
    if (m) return m[1]!;
  }
  return null;
};

/**
 * `tuned-adm list`:
 *   Available profiles:
 *   - <name padded to a column> - <description>
 *   Current active profile: <name>
 * The description part is optional (profiles without a summary line).
 */
export const parseTunedList = (stdout: string): TunedList => {
  const profiles: TunedProfile[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^-\s+(\S+)(?:\s+-\s+(.*?))?\s*$/.exec(line);
    if (m) profiles.push({ name: m[1]!, description: m[2] || null });
  }
  return { profiles, active: parseTunedActive(stdout) };
};

export interface PpdProfile {
  name: string;
  active: boolean;
  /** Driver lines as printed: `Driver` (before 0.20), `CpuDriver` / `PlatformDriver` (0.20 and later). */
  drivers: Record<string, string>;
  /** null when the line is absent (only `performance` carries it); otherwise the text after "yes". */
  degraded: { degraded: boolean; reason: string | null } | null;
}

/**
 * `powerprofilesctl list` (old and new formats):
 *   * performance:                         <- "* " marks the active profile, "  " the others
 *       Driver:     intel_pstate           <- before 0.20; later CpuDriver:\t / PlatformDriver:\t
 *       Degraded:   yes (high-operating-temperature)
 *   <blank line between profiles>
 */
export const parsePpdList = (stdout: string): PpdProfile[] => {
  const profiles: PpdProfile[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const head = /^([* ]) (\S+):\s*$/.exec(line);
    if (head) {
      profiles.push({ name: head[2]!, active: head[1] === '*', drivers: {}, degraded: null });
      continue;
    }
    const current = profiles.at(-1);
    const field = /^\s+([A-Za-z]+):\s+(.*?)\s*$/.exec(line);
    if (!current || !field) continue;
    const [, key, value] = field as unknown as [string, string, string];
    if (key === 'Degraded') {
      const m = /^(yes|no)(?:\s*\((.*)\))?$/.exec(value);
      current.degraded = { degraded: m?.[1] === 'yes', reason: m?.[2] ?? null };
    } else {
      current.drivers[key] = value;
    }
  }
  return profiles;
};

/** `powerprofilesctl get`: the profile name on one line. */
export const parsePpdGet = (stdout: string): string | null => stdout.trim().split(/\r?\n/)[0]?.trim() || null;

/** The polkit action named in a D-Bus AccessDenied answer ("Not Authorized: <action> (9)"), if any. */
export const polkitActionOf = (stderr: string): string | null =>
  /Not Authori[sz]ed:\s*([\w.-]+)/.exec(stderr)?.[1] ?? null;
