/**
 * The exact ways to apply a recommendation: the REST call and the CLI command (both from
 * set_power_plan's bindings), and the native command of the owner (powercfg and PowerShell,
 * tuned-adm, powerprofilesctl, sysfs). Commands are built only from plan ids the system reported
 * (checked against a strict pattern), never from free text.
 */
import type { AdviceAction, RecommendedPlan } from '../domain/advice.ts';
import type { BackendName, Owner } from '../domain/schemas.ts';
import { setPlanRoute } from '../domain/set-plan-route.ts';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Profile and governor ids as tuned, PPD and sysfs name them (`powersave:balance_performance`). */
const LINUX_ID = /^[A-Za-z0-9][A-Za-z0-9_.+:-]{0,63}$/;

export interface ActionContext {
  backend: BackendName;
  owner: Owner;
  policyManaged: boolean;
}

const { http, cli } = setPlanRoute;
/** The input field that names the plan (the REST body's key, the CLI's positional argument). */
const PLAN = cli.positional[0]!;

const rest = (planId: string, description: string, create = false): AdviceAction => {
  const body = { [PLAN]: planId, ...(create ? { create: true } : {}) };
  return {
    via: 'rest',
    description,
    command: `${http.method} ${http.path} ${JSON.stringify(body)}`,
    request: { method: http.method, path: http.path, body },
  };
};

const cliSet = (planId: string, create = false): AdviceAction => ({
  via: 'cli',
  description: 'The same from the command line.',
  command: ['powerplan', ...cli.command, planId, ...(create ? ['--create'] : [])].join(' '),
});

const windowsActions = (target: RecommendedPlan, policyManaged: boolean): AdviceAction[] => {
  if (!GUID.test(target.id)) return [];
  if (!target.installed) {
    // A plan to create is named by its template's GUID; set_power_plan creates it from its kind.
    const template = target.id;
    return [
      rest(target.kind, `Create the ${target.name} plan from its template and make it active.`, true),
      cliSet(target.kind, true),
      {
        via: 'powercfg',
        description:
          'Create the plan (powercfg prints the new GUID), then activate that GUID: powercfg /setactive <the GUID printed>.',
        command: `powercfg /duplicatescheme ${template}`,
      },
      {
        via: 'powershell',
        description: 'Create the plan under a GUID chosen first, then activate it (elevated PowerShell).',
        command: `$g = [guid]::NewGuid(); powercfg.exe /duplicatescheme ${template} $g; powercfg.exe /setactive $g`,
      },
    ];
  }
  const actions: AdviceAction[] = [
    rest(target.id, `Make ${target.name} the active plan.`),
    cliSet(target.id),
    {
      via: 'powercfg',
      description: 'Native command (elevated prompt).',
      command: `powercfg /setactive ${target.id}`,
    },
    {
      via: 'powershell',
      description: 'Activate and show the result (elevated PowerShell).',
      command: `powercfg.exe /setactive ${target.id}; powercfg.exe /getactivescheme`,
    },
  ];
  if (policyManaged) {
    actions.push({
      via: 'group-policy',
      description:
        'Group policy sets the plan here: change the policy itself, or the next refresh reverts any other change.',
      command: `Computer Configuration > Administrative Templates > System > Power Management > Specify a custom active power plan: ${target.id}`,
    });
  }
  return actions;
};

const linuxNative = (target: RecommendedPlan, owner: Owner): AdviceAction | undefined => {
  switch (owner) {
    case 'tuned':
      return {
        via: 'tuned-adm',
        description: 'Native command (root).',
        command: `tuned-adm profile ${target.id}`,
      };
    case 'power-profiles-daemon':
      return {
        via: 'powerprofilesctl',
        description: 'Native command.',
        command: `powerprofilesctl set ${target.id}`,
      };
    case 'sysfs': {
      const [governor, epp] = target.id.split(':');
      const write = (value: string, file: string) =>
        `echo ${value} | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/${file}`;
      return {
        via: 'sysfs',
        description: 'Write the governor (and energy preference) of every CPU (root; lost at reboot).',
        command: [
          write(governor!, 'scaling_governor'),
          ...(epp ? [write(epp, 'energy_performance_preference')] : []),
        ].join(' && '),
      };
    }
    default:
      return undefined;
  }
};

/** Every way to switch to `target`; empty when it is already active. */
export const actionsFor = (target: RecommendedPlan, ctx: ActionContext): AdviceAction[] => {
  if (target.active) return [];
  if (ctx.backend === 'windows' || ctx.backend === 'simulated')
    return windowsActions(target, ctx.policyManaged);
  const apply = rest(target.id, `Make ${target.name} the active plan.`);
  if (!LINUX_ID.test(target.id)) return [apply];
  const native = linuxNative(target, ctx.owner);
  return [apply, cliSet(target.id), ...(native ? [native] : [])];
};
