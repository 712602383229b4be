/**
 * power-profiles-daemon (or a daemon speaking its D-Bus API, e.g. tuned-ppd) as the owner: it owns
 * the system when its bus name has an owner that answers with profiles (ppd-bus.ts: read from its
 * D-Bus properties, no program started). Plans are its profiles (performance is absent with the
 * placeholder driver); a change goes through `powerprofilesctl set <name>`, authorised by polkit
 * (`...PowerProfiles.switch-profile`).
 */
import { PowerPlanError } from '../../domain/errors.ts';
import type { Note } from '../../domain/notes.ts';
import { exec, type Runner, said } from './commands.ts';
import { ppdKind } from './kinds.ts';
import { type Candidate, notSettable, type Probe, planList } from './owner-view.ts';
import { type PpdProfile, parsePpdGet, polkitActionOf } from './parsers.ts';
import type { PpdBus } from './ppd-bus.ts';

/** The action name since 0.20 (D-Bus name org.freedesktop.UPower.PowerProfiles); older: net.hadess.PowerProfiles. */
export const PPD_POLKIT_ACTION = 'org.freedesktop.UPower.PowerProfiles.switch-profile';

const describe = (p: PpdProfile): string | undefined => {
  const drivers = Object.entries(p.drivers).map(([k, v]) => `${k}: ${v}`);
  const degraded = p.degraded?.degraded
    ? [`degraded${p.degraded.reason ? ` (${p.degraded.reason})` : ''}`]
    : [];
  const parts = [...drivers, ...degraded];
  return parts.length ? parts.join(', ') : undefined;
};

/** null: power-profiles-daemon is not installed; a note: installed but the daemon does not answer. */
export const probePpd = async (runner: Runner, bus: PpdBus): Promise<Probe> => {
  const answer = await bus.read();
  if (!answer.running && !(await bus.installed())) return null;
  const profiles = answer.running ? answer.profiles : [];
  if (profiles.length === 0) {
    const why = answer.running ? `${answer.name} lists no profiles` : answer.reason;
    return {
      note: {
        code: 'owner-inactive',
        text: `powerprofilesctl is installed but power-profiles-daemon does not answer (${why}); it is not the owner here.`,
      },
    };
  }
  const candidates: Candidate[] = profiles.map((p) => {
    const description = describe(p);
    return { id: p.name, name: p.name, ...ppdKind(p.name), ...(description ? { description } : {}) };
  });
  const active = answer.running ? answer.active : null;
  const notes: Note[] = profiles
    .filter((p) => p.degraded?.degraded)
    .map((p) => ({
      code: 'profile-degraded',
      text: `The ${p.name} profile is degraded${p.degraded?.reason ? ` (${p.degraded.reason})` : ''}: the daemon runs it with reduced performance.`,
    }));
  if (!profiles.some((p) => p.name === 'performance')) {
    notes.push({
      code: 'no-performance-profile',
      text: 'power-profiles-daemon offers no performance profile here (placeholder driver: no CPU or platform driver it can steer).',
    });
  }

  return {
    view: {
      owner: 'power-profiles-daemon',
      plans: planList(candidates, active),
      canSet: true,
      notes,
      async set(planId) {
        if (!candidates.some((c) => c.id === planId)) throw notSettable(planId, candidates);
        bus.forget();
        const res = await exec(runner, runner.files.powerprofilesctl, ['set', planId]);
        if (!res)
          throw new PowerPlanError('os_error', 'powerprofilesctl disappeared while switching the profile.');
        if (res.exitCode !== 0) {
          const text = `${res.stderr}\n${res.stdout}`;
          if (/AccessDenied|Not Authori[sz]ed/i.test(text)) {
            const action = polkitActionOf(text) ?? PPD_POLKIT_ACTION;
            throw new PowerPlanError(
              'forbidden',
              `power-profiles-daemon refused to switch to '${planId}': the caller lacks the polkit action ${action}. ` +
                'Run the service as root or grant that action.',
              { right: action },
            );
          }
          throw new PowerPlanError('os_error', `powerprofilesctl set ${planId} failed: ${said(res)}`);
        }
        const get = await exec(runner, runner.files.powerprofilesctl, ['get']);
        const now = get && get.exitCode === 0 ? parsePpdGet(get.stdout) : null;
        if (now !== planId) {
          throw new PowerPlanError(
            'os_error',
            `powerprofilesctl set ${planId} reported success but the active profile is ${now ?? 'unknown'}.`,
          );
        }
      },
    },
  };
};
