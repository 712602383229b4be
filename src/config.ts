/**
 * Configuration, parsed once with zod from command-line flags and POWERPLAN_* variables (flags win).
 * Nothing else in the code reads process.env.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { PowerPlanError } from './domain/errors.ts';

/** The system's state directory on Linux: the service's (the unit's, the .deb's, the image's). */
export const SYSTEM_STATE_DIR = '/var/lib/powerplan';

/**
 * Who runs this process and who owns a directory, for the default state directory (tests give
 * their own).
 */
export interface StateDirProbe {
  uid: number | undefined;
  ownerOf: (dir: string) => number | undefined;
}
const realProbe: StateDirProbe = {
  uid: process.getuid?.(),
  ownerOf: (dir) => statSync(dir, { throwIfNoEntry: false })?.uid,
};

/**
 * Windows: %ProgramData%\powerplan. Linux: /var/lib/powerplan for root and for the user who owns
 * it (the packaged service's user: its CLI then reads the service's state, as the unit does);
 * every other user has ~/.local/state/powerplan (XDG_STATE_HOME).
 */
export const defaultStateDir = (env: NodeJS.ProcessEnv, probe: StateDirProbe = realProbe): string => {
  if (process.platform === 'win32') return join(env.ProgramData ?? 'C:\\ProgramData', 'powerplan');
  if (probe.uid === 0) return SYSTEM_STATE_DIR;
  if (probe.uid !== undefined && probe.ownerOf(SYSTEM_STATE_DIR) === probe.uid) return SYSTEM_STATE_DIR;
  return join(env.XDG_STATE_HOME ?? join(homedir(), '.local', 'state'), 'powerplan');
};

const defaultPowercfg = (env: NodeJS.ProcessEnv): string =>
  join(env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows', 'System32', 'powercfg.exe');

/** icacls.exe, for the access control list of the state directory and the token file. */
const defaultIcacls = (env: NodeJS.ProcessEnv): string =>
  join(env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows', 'System32', 'icacls.exe');

/** Windows PowerShell, which reads the owner of the state directory and the token file (icacls cannot). */
const defaultPowershell = (env: NodeJS.ProcessEnv): string =>
  join(
    env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows',
    'System32',
    'WindowsPowerShell',
    'v1.0',
    'powershell.exe',
  );

/** reg.exe, for the group policy and code page lookups of the Windows backend. */
const defaultReg = (env: NodeJS.ProcessEnv): string =>
  join(env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows', 'System32', 'reg.exe');

/** wevtutil.exe, for the Kernel-Processor-Power events (who controls the processor). */
const defaultWevtutil = (env: NodeJS.ProcessEnv): string =>
  join(env.SystemRoot ?? env.SYSTEMROOT ?? 'C:\\Windows', 'System32', 'wevtutil.exe');

/** A boolean variable: true/false, 1/0, yes/no. */
export const boolVar = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** A host name or address a Host header may carry: `name`, `name:port`, `[v6]` or `[v6]:port`. */
const HOST_ENTRY =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/**
 * POWERPLAN_ALLOWED_HOSTS: extra names (besides loopback) that callers without a token may put in
 * the Host header, comma-separated, lower-cased; `name` allows any port, `name:port` one port.
 */
export const hostList = z
  .string()
  .transform((text) =>
    text
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z
        .string()
        .regex(
          HOST_ENTRY,
          "list host names or addresses, comma-separated, each optionally with ':port' (no scheme, no path, no '*')",
        ),
    ),
  );

export const ConfigSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8750),
  backend: z.enum(['auto', 'windows', 'linux', 'simulated']).default('auto'),
  stateDir: z.string().min(1),
  powercfg: z.string().min(1),
  reg: z.string().min(1),
  wevtutil: z.string().min(1),
  codepage: z.coerce.number().int().positive().optional(),
  sysfsRoot: z.string().min(1).default('/sys'),
  procfsRoot: z.string().min(1).default('/proc'),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  tokenFile: z.string().min(1).optional(),
  tlsCert: z.string().min(1).optional(),
  tlsKey: z.string().min(1).optional(),
  corsOrigins: z.string().min(1).optional(),
  frameAncestors: z.string().min(1).default("'self'"),
  allowedHosts: hostList.default([]),
  /** Desired state (docs/HOLDS.md): the plan to keep, how often to check (s), whether to set it back. */
  desiredPlan: z.string().min(1).max(256).optional(),
  desiredInterval: z.coerce.number().int().min(1).max(86_400).default(60),
  desiredEnforce: boolVar.default(false),
  /** The fleet (docs/FLEET.md): the fleet file, an Ansible inventory, per-host timeout, concurrency. */
  fleet: z.string().min(1).optional(),
  ansibleInventory: z.string().min(1).optional(),
  fleetTimeoutMs: z.coerce.number().int().min(100).max(120_000).default(5_000),
  fleetConcurrency: z.coerce.number().int().min(1).max(256).default(16),
  /** The largest answer read from Prometheus, MiB: well below the heap (128 MB under the unit's flags). */
  fleetMaxAnswerMib: z.coerce.number().int().min(1).max(64).default(8),
  /** Audit trail rotation: a file is rotated at this size; this many files are kept. */
  auditMaxBytes: z.coerce
    .number()
    .int()
    .min(4096)
    .default(10 * 1024 * 1024),
  auditFiles: z.coerce.number().int().min(1).max(100).default(5),
  /** Refused attempts to change a plan audited per minute; the rest are counted in one summary line. */
  auditRefusals: z.coerce.number().int().min(1).max(10_000).default(30),
  /** Holds in force at once; one more is refused (409). */
  maxHolds: z.coerce.number().int().min(1).max(10_000).default(100),
  /** A lock not refreshed for this long is stale (its holder refreshes it every quarter of it). */
  lockStaleSeconds: z.coerce.number().min(0.2).max(86_400).default(120),
  icacls: z.string().min(1),
  powershell: z.string().min(1),
  /** Check and set the ACL of the state directory and token file: on Windows (auto) or always. */
  aclCheck: z.enum(['auto', 'always']).default('auto'),
  /** The local control channel (lib/control-socket.ts): a socket path or pipe name, or `none`. */
  controlSocket: z.string().min(1).optional(),
});
export type Config = z.infer<typeof ConfigSchema>;

/** Whether a fleet is configured (a fleet file or an Ansible inventory): the fleet operations work only then. */
export const fleetConfigured = (c: Pick<Config, 'fleet' | 'ansibleInventory'>): boolean =>
  Boolean(c.fleet || c.ansibleInventory);

/** Variable name for each config key; a flag is the kebab-case key (`--state-dir`). */
const variables: Record<keyof Config, string> = {
  host: 'POWERPLAN_HOST',
  port: 'POWERPLAN_PORT',
  backend: 'POWERPLAN_BACKEND',
  stateDir: 'POWERPLAN_STATE_DIR',
  powercfg: 'POWERPLAN_POWERCFG',
  reg: 'POWERPLAN_REG',
  wevtutil: 'POWERPLAN_WEVTUTIL',
  codepage: 'POWERPLAN_CODEPAGE',
  sysfsRoot: 'POWERPLAN_SYSFS_ROOT',
  procfsRoot: 'POWERPLAN_PROCFS_ROOT',
  logLevel: 'POWERPLAN_LOG_LEVEL',
  tokenFile: 'POWERPLAN_TOKEN_FILE',
  tlsCert: 'POWERPLAN_TLS_CERT',
  tlsKey: 'POWERPLAN_TLS_KEY',
  corsOrigins: 'POWERPLAN_CORS_ORIGINS',
  frameAncestors: 'POWERPLAN_FRAME_ANCESTORS',
  allowedHosts: 'POWERPLAN_ALLOWED_HOSTS',
  desiredPlan: 'POWERPLAN_DESIRED_PLAN',
  desiredInterval: 'POWERPLAN_DESIRED_INTERVAL',
  desiredEnforce: 'POWERPLAN_ENFORCE',
  fleet: 'POWERPLAN_FLEET_FILE',
  ansibleInventory: 'POWERPLAN_ANSIBLE_INVENTORY',
  fleetTimeoutMs: 'POWERPLAN_FLEET_TIMEOUT_MS',
  fleetConcurrency: 'POWERPLAN_FLEET_CONCURRENCY',
  fleetMaxAnswerMib: 'POWERPLAN_FLEET_MAX_ANSWER_MIB',
  auditMaxBytes: 'POWERPLAN_AUDIT_MAX_BYTES',
  auditFiles: 'POWERPLAN_AUDIT_FILES',
  auditRefusals: 'POWERPLAN_AUDIT_REFUSALS',
  maxHolds: 'POWERPLAN_MAX_HOLDS',
  lockStaleSeconds: 'POWERPLAN_LOCK_STALE_SECONDS',
  icacls: 'POWERPLAN_ICACLS',
  powershell: 'POWERPLAN_POWERSHELL',
  aclCheck: 'POWERPLAN_ACL_CHECK',
  controlSocket: 'POWERPLAN_CONTROL_SOCKET',
};

export const configVariables = variables;

/** What each setting does, for `powerplan serve --help` (the README's table says the same at length). */
export const configHelp: Record<keyof Config, string> = {
  host: 'address to listen on (default 127.0.0.1; another needs a token file)',
  port: 'port to listen on (default 8750; 0 picks a free one)',
  backend: 'auto (by platform), windows, linux or simulated (default auto)',
  stateDir:
    'audit log, benchmark history, holds, journals (default /var/lib/powerplan as root and as its owner, the service user; %ProgramData%\\powerplan on Windows)',
  powercfg: 'powercfg.exe to run (Windows; never looked up on PATH)',
  reg: 'reg.exe for group policy and the code page (Windows)',
  wevtutil: 'wevtutil.exe for the processor power events 55/37 (Windows)',
  codepage: 'OEM code page of powercfg output (Windows; default from the registry)',
  sysfsRoot: 'sysfs root the Linux backend reads (default /sys)',
  procfsRoot: 'procfs root read for virtualization hints (default /proc)',
  logLevel: 'debug, info, warn, error or silent (default info; JSON lines on stderr)',
  tokenFile: 'token file (powerplan token create); without one, loopback callers only',
  tlsCert: 'PEM certificate; with --tls-key the server speaks HTTPS',
  tlsKey: 'PEM private key of --tls-cert',
  corsOrigins: 'comma-separated origins allowed by CORS (default none: CORS off)',
  frameAncestors: "who may frame the pages (CSP frame-ancestors; default 'self')",
  allowedHosts: 'extra Host names (name or name:port) that callers without a token may use',
  desiredPlan: 'the plan this server should be in; drift is reported',
  desiredInterval: 'seconds between desired-state checks (default 60)',
  desiredEnforce: 'true: set a drifted plan back (never against a hold or group policy; default false)',
  fleet: 'fleet file naming the agents the fleet commands ask',
  ansibleInventory: 'Ansible inventory whose hosts with powerplan_url join the fleet',
  fleetTimeoutMs: 'per-host timeout of a fleet call, ms (default 5000)',
  fleetConcurrency: 'fleet hosts asked at once (default 16)',
  fleetMaxAnswerMib: 'largest answer read from Prometheus, MiB; a larger one is a 502 (default 8)',
  auditMaxBytes: 'size at which audit.jsonl is rotated (default 10485760)',
  auditFiles: 'audit files kept, the current one included (default 5)',
  auditRefusals: 'refused plan changes audited per minute, then one summary line (default 30)',
  maxHolds: 'holds in force at once; one more is refused with 409 (default 100)',
  lockStaleSeconds: 'a lock not refreshed for this long is stale (default 120)',
  icacls: 'icacls.exe that sets and checks the ACLs of the state directory and token file (Windows)',
  powershell: 'powershell.exe that reads the owner of the state directory and token file (Windows)',
  aclCheck: 'auto: check and set ACLs on Windows; always: everywhere (default auto)',
  controlSocket:
    'local control socket (default <state dir>/control/powerplan.sock; \\\\.\\pipe\\powerplan on Windows; none: off)',
};

export const loadConfig = (
  env: NodeJS.ProcessEnv = process.env,
  flags: Partial<Record<keyof Config, string>> = {},
): Config => {
  const raw: Record<string, unknown> = {
    stateDir: defaultStateDir(env),
    powercfg: defaultPowercfg(env),
    reg: defaultReg(env),
    wevtutil: defaultWevtutil(env),
    icacls: defaultIcacls(env),
    powershell: defaultPowershell(env),
  };
  for (const [key, name] of Object.entries(variables) as [keyof Config, string][]) {
    const value = flags[key] ?? env[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const key = i.path[0] as keyof Config;
      return `${variables[key] ?? key}: ${i.message}`;
    });
    throw new PowerPlanError('invalid_input', `Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return parsed.data;
};

/**
 * A secret named by the fleet file's `tokenEnv`: read here so that this file stays the one place
 * that reads the environment.
 */
export const secretFromEnvironment = (
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined => env[name];
