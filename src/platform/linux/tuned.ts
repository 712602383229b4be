/**
 * tuned as the owner: it owns the system when `tuned-adm active` names a profile (the daemon runs
 * and applies it). Plans are its profiles; a change goes through `tuned-adm profile <name>`, whose
 * D-Bus call is authorised by polkit (com.redhat.tuned.switch_profile) or root.
 */
import { PowerPlanError } from '../../domain/errors.ts';
import { exec, type Runner, read, said } from './commands.ts';
import { tunedKind } from './kinds.ts';
import { type Candidate, notSettable, type Probe, planList } from './owner-view.ts';
import { parseTunedActive, parseTunedList } from './parsers.ts';

export const TUNED_POLKIT_ACTION = 'com.redhat.tuned.switch_profile';

const activeProfile = async (runner: Runner): Promise<string | null> => {
  const out = await exec(runner, runner.files.tunedAdm, ['active']);
  return out && out.exitCode === 0 ? parseTunedActive(out.stdout) : null;
};

const candidate = (name: string, description: string | null): Candidate => ({
  id: name,
  name,
  ...tunedKind(name),
  ...(description ? { description } : {}),
});

/** null: tuned-adm is not installed; a note: installed but not applying any profile. */
export const probeTuned = async (runner: Runner): Promise<Probe> => {
  const out = await read(runner, runner.files.tunedAdm, ['active']);
  if (!out) return null;
  const active = out.exitCode === 0 ? parseTunedActive(out.stdout) : null;
  if (!active) {
    return {
      note: {
        code: 'owner-inactive',
        text: `tuned-adm is installed but TuneD applies no profile (${said(out)}); it is not the owner here.`,
      },
    };
  }
  const list = await read(runner, runner.files.tunedAdm, ['list']);
  if (list?.exitCode !== 0) {
    throw new PowerPlanError('os_error', `tuned-adm list failed: ${list ? said(list) : 'not found'}`);
  }
  const candidates = parseTunedList(list.stdout).profiles.map((p) => candidate(p.name, p.description));
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
        const now = await activeProfile(runner);
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
