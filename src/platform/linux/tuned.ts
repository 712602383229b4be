/**
 * tuned as the owner: it owns the system when its daemon runs and a profile is active, which is what
 * `tuned-adm active` reports, learnt here from tuned's own files (tuned-state.ts) without starting
 * a program. Plans are its profiles; a change goes through `tuned-adm profile <name>`, whose D-Bus
 * call is authorised by polkit (com.redhat.tuned.switch_profile) or root, and is read back from
 * the files.
 */
import { PowerPlanError } from '../../domain/errors.ts';
import { exec, type Runner, said } from './commands.ts';
import { tunedKind } from './kinds.ts';
import { type Candidate, notSettable, type Probe, planList } from './owner-view.ts';
import { readTunedState, type TunedPaths, type TunedProfiles } from './tuned-state.ts';

export const TUNED_POLKIT_ACTION = 'com.redhat.tuned.switch_profile';

const candidate = (name: string, description: string | null): Candidate => ({
  id: name,
  name,
  ...tunedKind(name),
  ...(description ? { description } : {}),
});

export interface TunedSource {
  paths: TunedPaths;
  profiles: TunedProfiles;
}

/** null: tuned is not installed; a note: installed but not applying any profile. */
export const probeTuned = async (runner: Runner, source: TunedSource): Promise<Probe> => {
  const state = await readTunedState(source.paths);
  if (!state.installed && !state.running) return null;
  const active = state.running ? state.active : null;
  if (!active) {
    const why = state.running
      ? 'no current active profile'
      : `its daemon is not running (no live ${source.paths.pidFile})`;
    return {
      note: {
        code: 'owner-inactive',
        text: `tuned-adm is installed but TuneD applies no profile (${why}); it is not the owner here.`,
      },
    };
  }
  const candidates = (await source.profiles.list()).map((p) => candidate(p.name, p.description));
  // tuned can merge profiles ("a b"); that state is shown as its own plan, settable as such.
  const merged = active.split(/\s+/);
  const unlisted: Candidate = { ...candidate(active, 'profiles merged by tuned'), builtin: false };
  const settable = (id: string) =>
    candidates.some((c) => c.id === id) ||
    (id === active && merged.every((m) => candidates.some((c) => c.id === m)));

  return {
    view: {
      owner: 'tuned',
      plans: planList(candidates, active, unlisted),
      canSet: true,
      notes: [],
      async set(planId) {
        if (!settable(planId)) throw notSettable(planId, candidates);
        const res = await exec(runner, runner.files.tunedAdm, ['profile', ...planId.split(/\s+/)]);
        if (!res) throw new PowerPlanError('os_error', 'tuned-adm disappeared while switching the profile.');
        if (res.exitCode !== 0) {
          if (/Unauthori[sz]ed|Not authori[sz]ed|AccessDenied/i.test(`${res.stderr}\n${res.stdout}`)) {
            throw new PowerPlanError(
              'forbidden',
              `TuneD refused to switch to '${planId}': the caller lacks the polkit action ${TUNED_POLKIT_ACTION}. ` +
                'Run the service as root or grant that action.',
              { right: TUNED_POLKIT_ACTION },
            );
          }
          throw new PowerPlanError('os_error', `tuned-adm profile ${planId} failed: ${said(res)}`);
        }
        const after = await readTunedState(source.paths);
        const now = after.running ? after.active : null;
        if (now !== planId) {
          throw new PowerPlanError(
            'os_error',
            `tuned-adm profile ${planId} reported success but the active profile is ${now ?? 'none'}.`,
          );
        }
      },
    },
  };
};
