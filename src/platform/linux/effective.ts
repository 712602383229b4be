/**
 * Requested versus effective on Linux: after a switch, the settings that matter are read back from
 * where they take effect (sysfs), and tuned is asked to verify its own profile (`tuned-adm verify`,
 * whose details tuned writes to its log: `verify: failed: ...` and `Unknown option ...` lines).
 */
import { open } from 'node:fs/promises';
import type { Effective, Mismatch } from '../../domain/idle.ts';
import type { Owner, PlanKind } from '../../domain/schemas.ts';
import { exec, type Runner } from './commands.ts';
import { common, type SysfsState } from './sysfs.ts';
import { activeSysfsId } from './sysfs-owner.ts';

/** The last `bytes` of a file as text; '' when unreadable. */
const tail = async (path: string, bytes = 64 * 1024): Promise<string> => {
  try {
    const fh = await open(path, 'r');
    try {
      const { size } = await fh.stat();
      const start = Math.max(0, size - bytes);
      const buf = Buffer.alloc(size - start);
      await fh.read(buf, 0, buf.length, start);
      return buf.toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return '';
  }
};

/**
 * The verify failures and ignored options in tuned's log since the last profile switch (tuned logs
 * "verify: failed: 'name' = 'current', expected 'wanted'" and "Unknown option 'x' for plugin 'P'.").
 */
export const parseTunedLog = (log: string): Mismatch[] => {
  const lines = log.split(/\r?\n/);
  let start = 0;
  lines.forEach((l, i) => {
    // tuned logs "loading profile: <name>" when a switch starts (tuned/profiles/loader.py).
    if (/loading profiles?: /.test(l)) start = i;
  });
  const out: Mismatch[] = [];
  for (const l of lines.slice(start)) {
    const failed = /verify: failed: (?:device (\S+): )?'([^']+)' = '([^']*)', expected '([^']*)'/.exec(l);
    if (failed) {
      const [, device, name, got, wanted] = failed;
      const setting = device ? `${name} (${device})` : name!;
      if (!out.some((m) => m.setting === setting))
        out.push({
          setting,
          wanted: wanted!,
          got: got!,
          cause:
            'tuned applied the profile but the value did not stick: another tool, the firmware or a refused write changed it back (see the tuned log).',
        });
      continue;
    }
    const unknown = /Unknown option '([^']+)' for plugin '([^']+)'/.exec(l);
    if (unknown && !out.some((m) => m.setting === unknown[1])) {
      out.push({
        setting: unknown[1]!,
        wanted: 'set by the profile',
        got: null,
        cause: `tuned ignores option '${unknown[1]}' (unknown to its ${unknown[2]}): probably misspelled in the profile, so it was never applied.`,
      });
    }
  }
  return out;
};

export const tunedVerify = async (runner: Runner, logPath: string): Promise<Effective> => {
  const res = await exec(runner, runner.files.tunedAdm, ['verify']);
  if (!res) return { checked: false, matches: true, settings: [], mismatches: [] };
  const details = parseTunedLog(await tail(logPath));
  const ok = res.exitCode === 0;
  // An ignored option is a mismatch even when verify passes: tuned never checks what it did not apply.
  const mismatches = ok ? details.filter((m) => m.got === null) : details;
  if (!ok && mismatches.length === 0) {
    mismatches.push({
      setting: 'tuned profile',
      wanted: "the profile's settings",
      got: 'different',
      cause: `tuned-adm verify failed ("${(res.stdout.trim().split(/\r?\n/)[0] ?? '').slice(0, 200)}"); tuned's log has the details.`,
    });
  }
  return { checked: true, matches: mismatches.length === 0, settings: ['tuned-adm verify'], mismatches };
};

/** What power-profiles-daemon sets for each profile where the knob exists. */
const PPD_EXPECT: Record<string, { platformProfile: string[]; epp: string[] }> = {
  performance: { platformProfile: ['performance'], epp: ['performance'] },
  balanced: { platformProfile: ['balanced'], epp: ['balance_performance', 'balance_power'] },
  'power-saver': { platformProfile: ['low-power', 'quiet', 'cool'], epp: ['power', 'balance_power'] },
};

/**
 * What a full-speed plan (high or ultimate performance, whoever owns it) needs from the limits
 * around it: no frequency cap below the hardware maximum, no performance cap in intel_pstate, and
 * turbo allowed. A plan that saves power may lower them, so only full-speed plans are held to them.
 */
const fullSpeedLimits = (s: SysfsState, settings: string[], mismatches: Mismatch[]) => {
  const limited = s.cpus.filter((c) => c.maxKHz !== null && c.hwMaxKHz !== null);
  if (limited.length > 0) {
    settings.push('maxFrequency');
    const capped = limited.filter((c) => c.maxKHz! < c.hwMaxKHz!);
    if (capped.length > 0) {
      const hw = Math.max(...capped.map((c) => c.hwMaxKHz!));
      const got = Math.min(...capped.map((c) => c.maxKHz!));
      mismatches.push({
        setting: 'maxFrequency',
        wanted: `${hw} kHz (cpuinfo_max_freq)`,
        got: `${got} kHz on ${capped.length} of ${s.cpus.length} CPUs`,
        cause:
          'scaling_max_freq is capped below what the CPU can do: thermald, a tuned or cpupower setting, or another tool limits it, so the plan cannot reach full clock (raise scaling_max_freq or find the tool that lowers it).',
      });
    }
  }
  const p = s.intelPstate;
  if (p?.maxPerfPct !== null && p?.maxPerfPct !== undefined) {
    settings.push('maxPerfPct');
    if (p.maxPerfPct < 100)
      mismatches.push({
        setting: 'maxPerfPct',
        wanted: 100,
        got: p.maxPerfPct,
        cause:
          'intel_pstate/max_perf_pct caps the performance the driver may choose: a tuned profile, thermald or another tool wrote it.',
      });
  }
  const turboOff = p?.noTurbo ?? (s.boost === null ? null : !s.boost);
  if (turboOff !== null) {
    settings.push('turbo');
    if (turboOff)
      mismatches.push({
        setting: 'turbo',
        wanted: 'allowed',
        got:
          p?.noTurbo !== null && p?.noTurbo !== undefined
            ? 'off (intel_pstate/no_turbo = 1)'
            : 'off (cpufreq/boost = 0)',
        cause:
          'turbo is switched off: by a tool or profile that wrote the knob, or by the firmware (then the BIOS setting decides and nothing here can change it).',
      });
  }
};

/** Reads back the sysfs knobs the switch should have changed (owner and the plan's kind decide which). */
export const sysfsEffective = (owner: Owner, planId: string, s: SysfsState, kind?: PlanKind): Effective => {
  const mismatches: Mismatch[] = [];
  const settings: string[] = [];
  const epp = common(s.cpus.map((c) => c.energyPreference));
  if (owner === 'sysfs') {
    settings.push('governor', ...(epp !== null ? ['energyPreference'] : []));
    const now = activeSysfsId(s);
    if (now !== planId) {
      mismatches.push({
        setting: 'governor/energyPreference',
        wanted: planId,
        got: now,
        cause:
          'the CPUs read back another governor or EPP: another tool owns these knobs, or the driver refused the EPP (intel_pstate refuses an EPP other than performance under the performance governor).',
      });
    }
  }
  if (owner === 'power-profiles-daemon' && PPD_EXPECT[planId]) {
    const want = PPD_EXPECT[planId]!;
    if (s.platformProfile !== null) {
      settings.push('platformProfile');
      if (!want.platformProfile.includes(s.platformProfile))
        mismatches.push({
          setting: 'platformProfile',
          wanted: want.platformProfile[0]!,
          got: s.platformProfile,
          cause:
            'the ACPI platform profile did not follow the power profile: the firmware or another tool sets it.',
        });
    }
    if (epp !== null) {
      settings.push('energyPreference');
      if (!want.epp.includes(epp))
        mismatches.push({
          setting: 'energyPreference',
          wanted: want.epp[0]!,
          got: epp,
          cause:
            epp === 'mixed'
              ? 'CPUs disagree on the EPP: another tool wrote some of them.'
              : 'the EPP did not follow the power profile: refused under the performance governor, or another tool set it back.',
        });
    }
  }
  if (kind === 'high-performance' || kind === 'ultimate-performance')
    fullSpeedLimits(s, settings, mismatches);
  return { checked: settings.length > 0, matches: mismatches.length === 0, settings, mismatches };
};

/** Both reads merged into one answer. */
export const mergeEffective = (...parts: Effective[]): Effective => {
  const checked = parts.filter((p) => p.checked);
  const mismatches = checked.flatMap((p) => p.mismatches);
  return {
    checked: checked.length > 0,
    matches: mismatches.length === 0,
    settings: checked.flatMap((p) => p.settings),
    mismatches,
  };
};
