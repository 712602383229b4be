/**
 * TuneD's state read from its own files, as `tuned-adm` reads them (tuned/consts.py,
 * tuned/admin/admin.py, tuned/profiles/locator.py of tuned 2.x), without starting a program:
 * the active profile in /etc/tuned/active_profile (plus post_loaded_profile), the mode in
 * profile_mode, whether the daemon runs from its pid file and /proc, and the profiles from the
 * load directories (a directory with a tuned.conf; /etc/tuned wins over /usr/lib/tuned; the summary
 * from [main] summary=). The small files are read at every call (a change by any tool is seen at
 * the next read); the profile list is kept while the load directories' mtimes stay the same.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { TunedProfile } from './parsers.ts';
// tuned's small files (a name, a pid, a profile) are read as sysfs attributes are: synchronously, trimmed.
import { entries, present, readAttr as text } from './sysfs.ts';

export interface TunedPaths {
  /** /etc/tuned: active_profile, post_loaded_profile, profile_mode, tuned-main.conf. */
  etcDir: string;
  /** Profile directories, later ones overriding earlier ones. */
  profileDirs: readonly string[];
  pidFile: string;
  procfsRoot: string;
}

export const defaultTunedPaths = (procfsRoot: string): TunedPaths => ({
  etcDir: '/etc/tuned',
  profileDirs: ['/usr/lib/tuned', '/etc/tuned'],
  pidFile: '/run/tuned/tuned.pid',
  procfsRoot,
});

export interface TunedAnswer {
  /** Its main configuration exists (the package is installed). */
  installed: boolean;
  /** The pid in the pid file names a live tuned process. */
  running: boolean;
  /** The profile(s) in force as `tuned-adm active` names them ("a b" when merged), or null. */
  active: string | null;
  mode: 'auto' | 'manual' | null;
}

/** Whether the pid file names a live process whose command line is tuned's. */
const daemonRuns = async (paths: TunedPaths): Promise<boolean> => {
  const pid = Number((await text(paths.pidFile))?.trim());
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const cmdline = await text(join(paths.procfsRoot, String(pid), 'cmdline'));
  // A reused pid: the process there is not tuned.
  return cmdline?.split('\0').some((arg) => /(^|\/)tuned$/.test(arg)) ?? false;
};

export const readTunedState = async (paths: TunedPaths): Promise<TunedAnswer> => {
  const [main, running, active, post, mode] = await Promise.all([
    present(join(paths.etcDir, 'tuned-main.conf')),
    daemonRuns(paths),
    text(join(paths.etcDir, 'active_profile')),
    text(join(paths.etcDir, 'post_loaded_profile')),
    text(join(paths.etcDir, 'profile_mode')),
  ]);
  const names = [active, post].map((t) => t?.trim() ?? '').filter(Boolean);
  const m = mode?.trim();
  return {
    installed: main,
    running,
    active: names.length ? names.join(' ') : null,
    mode: m === 'auto' || m === 'manual' ? m : null,
  };
};

/** [main] summary= of a tuned.conf, as configobj reads it (no quotes handling beyond a plain value). */
export const tunedSummary = (conf: string): string | null => {
  let section = '';
  for (const line of conf.split(/\r?\n/)) {
    const head = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (head) {
      section = head[1]!.trim();
      continue;
    }
    const kv = /^\s*summary\s*=\s*(.*?)\s*$/.exec(line);
    if (section === 'main' && kv) return kv[1] || null;
  }
  return null;
};

/** The profiles tuned offers, sorted by name; kept while no load directory changes. */
export class TunedProfiles {
  readonly #dirs: readonly string[];
  #key = '';
  #list: Promise<TunedProfile[]> | null = null;

  constructor(dirs: readonly string[]) {
    this.#dirs = dirs;
  }

  async #load(): Promise<TunedProfile[]> {
    const found = new Map<string, string>();
    for (const dir of this.#dirs) {
      const names = entries(dir);
      await Promise.all(
        names.map(async (name) => {
          const conf = await text(join(dir, name, 'tuned.conf'));
          if (conf !== null) found.set(name, conf);
        }),
      );
    }
    return [...found]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, conf]) => ({ name, description: tunedSummary(conf) }));
  }

  async list(): Promise<TunedProfile[]> {
    // Synchronous like the files themselves: a stat of a directory tuned-adm would list.
    const key = this.#dirs
      .map((d) => {
        try {
          const s = statSync(d, { throwIfNoEntry: false });
          return s ? `${s.ino}:${s.mtimeMs}` : '-';
        } catch {
          return '-';
        }
      })
      .join('|');
    if (key !== this.#key || !this.#list) {
      this.#key = key;
      this.#list = this.#load();
    }
    return this.#list;
  }
}
