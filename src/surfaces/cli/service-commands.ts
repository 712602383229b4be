/**
 * `powerplan service install|uninstall`: registers powerplan.exe of the Windows release as the
 * Windows service "powerplan" through the service wrapper shipped beside it (WinSW,
 * powerplan-service.exe, configured by powerplan-service.xml), and removes it again.
 *
 * - install: the state directory gets its ACL (the same start-up guard as every command), the
 *   wrapper's config gets the listening address and token file (all addresses with a token file,
 *   else loopback only), the plan in force is remembered (service.json in the state directory),
 *   then the wrapper installs and starts the service.
 * - uninstall: the wrapper stops the service (Ctrl+C: a comparison under way is restored by the
 *   service itself), every hold is released (its plan restored), the plan remembered at install is
 *   set back if it is not in force, each change audited through the one plan-change path; then the
 *   wrapper removes the service. The state directory (audit trail, benchmarks) stays.
 * Both need an elevated prompt (the wrapper needs it to talk to the service control manager).
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import { localCaller } from '../../domain/scopes.ts';
import { runCommand } from '../../lib/run-command.ts';
import { releasePowerPlan } from '../../operations/release-power-plan.ts';
import { runOperation } from '../../operations/run.ts';
import { setPowerPlan } from '../../operations/set-power-plan.ts';
import type { CliIo, ServiceCommand } from './command.ts';
import { usageError } from './usage.ts';

export const SERVICE_WRAPPER = 'powerplan-service.exe';
export const SERVICE_CONFIG = 'powerplan-service.xml';

const Installed = z.object({
  installedAt: z.string(),
  planBefore: z.object({ id: z.string(), name: z.string() }).nullable(),
});

/** The wrapper beside the running executable, or why there is none. */
const wrapper = (): { exe: string; xml: string } => {
  if (process.platform !== 'win32') {
    throw new PowerPlanError(
      'invalid_input',
      "'powerplan service' registers the Windows service. On Debian and Ubuntu install the .deb, which brings " +
        'the systemd unit: systemctl enable --now powerplan (docs/LINUX.md).',
    );
  }
  const dir = dirname(process.execPath);
  const exe = join(dir, SERVICE_WRAPPER);
  const xml = join(dir, SERVICE_CONFIG);
  if (!existsSync(exe) || !existsSync(xml)) {
    throw new PowerPlanError(
      'invalid_input',
      `No service wrapper beside ${process.execPath} (${SERVICE_WRAPPER} and ${SERVICE_CONFIG}): run ` +
        "'powerplan.exe service install' from the unpacked Windows release (docs/WINDOWS-SERVICE.md).",
    );
  }
  return { exe, xml };
};

/** Runs the wrapper with one command (install, start, stop, uninstall); its output is reported. */
const wrap = async (exe: string, command: string, io: CliIo, tolerate = false): Promise<boolean> => {
  const r = await runCommand(exe, [command], { timeoutMs: 120_000 });
  const text = `${r.stdout.toString('utf8')}${r.stderr.toString('utf8')}`.trim();
  if (r.exitCode !== 0 && !tolerate) {
    throw new PowerPlanError(
      'os_error',
      `${SERVICE_WRAPPER} ${command} failed (exit code ${r.exitCode})${text ? `: ${text}` : ''}. ` +
        'It needs an elevated prompt (Run as administrator).',
    );
  }
  if (text) io.err(`${text}\n`);
  return r.exitCode === 0;
};

const xmlEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The wrapper's config with this install's address, token file and state directory: every other
 * line of the shipped file (arguments, flags, recovery, logs) stays as it is.
 */
export const configureServiceXml = (
  template: string,
  settings: { tokenFile: string | undefined; stateDir: string },
): string => {
  const env: [string, string][] = [
    ['POWERPLAN_HOST', settings.tokenFile ? '0.0.0.0' : '127.0.0.1'],
    ['POWERPLAN_STATE_DIR', settings.stateDir],
  ];
  if (settings.tokenFile) env.push(['POWERPLAN_TOKEN_FILE', settings.tokenFile]);
  const ours = new Set(['POWERPLAN_HOST', 'POWERPLAN_TOKEN_FILE', 'POWERPLAN_STATE_DIR']);
  const kept = template
    .split(/\r?\n/)
    .filter((line) => {
      const name = /<env\s+name="([^"]+)"/.exec(line)?.[1];
      return !name || !ours.has(name);
    })
    .join('\r\n');
  const lines = env.map(([k, v]) => `  <env name="${k}" value="${xmlEscape(v)}" />`).join('\r\n');
  if (!kept.includes('</service>'))
    throw new PowerPlanError('invalid_input', `${SERVICE_CONFIG} has no </service>`);
  return kept.replace('</service>', `${lines}\r\n</service>`);
};

const installedPath = (config: Config) => join(config.stateDir, 'service.json');

const install = async (config: Config, deps: Deps, io: CliIo): Promise<number> => {
  const { exe, xml } = wrapper();
  const tokenFile = config.tokenFile;
  if (tokenFile && !existsSync(tokenFile)) {
    throw new PowerPlanError(
      'invalid_input',
      `Invalid configuration:\n  POWERPLAN_TOKEN_FILE: ${tokenFile} does not exist. Create it first: ` +
        `powerplan token create --token-file ${tokenFile} --name <client> --scopes read`,
    );
  }
  const active = await deps.backend.getActive().catch(() => undefined);
  const planBefore = active?.plan ? { id: active.plan.id, name: active.plan.name } : null;
  if (!existsSync(installedPath(config))) {
    await writeFile(
      installedPath(config),
      `${JSON.stringify({ installedAt: new Date().toISOString(), planBefore }, null, 2)}\n`,
      { mode: 0o600 },
    );
  }
  await writeFile(
    xml,
    configureServiceXml(await readFile(xml, 'utf8'), { tokenFile, stateDir: config.stateDir }),
  );
  await wrap(exe, 'install', io);
  await wrap(exe, 'start', io);
  io.out(
    `Installed and started the Windows service 'powerplan' (${exe}).\n` +
      `  listening on ${tokenFile ? `all addresses, tokens from ${tokenFile}` : '127.0.0.1 only (no token file)'}, port ${config.port}\n` +
      `  state: ${config.stateDir}\n` +
      `  remove it with: ${process.execPath} service uninstall\n`,
  );
  return 0;
};

const uninstall = async (config: Config, deps: Deps, io: CliIo): Promise<number> => {
  const { exe } = wrapper();
  // Stopped first: the service restores a comparison under way itself on Ctrl+C.
  await wrap(exe, 'stop', io, true);
  const ctx = { ...deps, caller: localCaller, signal: deps.shutdown.signal };
  for (const hold of (await deps.holds.list()).holds) {
    await runOperation(releasePowerPlan, { id: hold.id }, ctx);
    io.err(`Released hold ${hold.id} (${hold.planId}).\n`);
  }
  const text = await readFile(installedPath(config), 'utf8').catch(() => undefined);
  const installed = text ? Installed.safeParse(JSON.parse(text)) : undefined;
  const before = installed?.success ? installed.data.planBefore : null;
  if (before) {
    const active = await deps.backend.getActive();
    if (active.plan?.id !== before.id) {
      await runOperation(setPowerPlan, { plan: before.id }, ctx);
      io.err(`Set the plan in force at install back: ${before.name} (${before.id}).\n`);
    }
  }
  await wrap(exe, 'uninstall', io);
  await rm(installedPath(config), { force: true });
  io.out(`Removed the Windows service 'powerplan'. The state directory stays: ${config.stateDir}\n`);
  return 0;
};

/** A `service` command: no arguments; only with the Windows service wrapper of the release. */
const serviceCommand = (
  command: string[],
  summary: string,
  action: (config: Config, deps: Deps, io: CliIo) => Promise<number>,
  usage?: string,
): ServiceCommand => ({
  command,
  summary,
  ...(usage ? { usage } : {}),
  run: async ({ positionals, config, deps, io }) => {
    if (positionals.length) {
      return usageError(io, `unexpected argument '${positionals[0]}'`, ['service', '<command>']);
    }
    wrapper();
    return action(config(), await deps(), io);
  },
});

export const windowsServiceCommands: ServiceCommand[] = [
  serviceCommand(
    ['service', 'install'],
    'Install and start the Windows service (elevated prompt, from the Windows release); with --token-file it listens on all addresses.',
    install,
    'service install [--token-file <path>]',
  ),
  serviceCommand(
    ['service', 'uninstall'],
    'Stop and remove the Windows service, releasing holds and setting back the plan in force at install (elevated prompt).',
    uninstall,
  ),
];
