/**
 * Loads the fleet: the fleet file (POWERPLAN_FLEET_FILE / --fleet) and, optionally, an Ansible
 * inventory read through `ansible-inventory --list` (POWERPLAN_ANSIBLE_INVENTORY /
 * --ansible-inventory). Files are read with readCarefully; relative paths in the fleet file are
 * relative to it. A host whose token or CA cannot be read is kept with its problem, so that the
 * others still answer; a fleet file that is not valid fails as a whole, naming host and field.
 */
import { dirname, resolve } from 'node:path';
import { type Config, secretFromEnvironment } from '../../config.ts';
import { describeZodError, PowerPlanError } from '../../domain/errors.ts';
import {
  FLEET_NAME,
  FleetFile,
  type FleetHostEntry,
  type PrometheusSource,
} from '../../domain/fleet-file.ts';
import { readCarefully } from '../../lib/careful-file.ts';
import { type RunFn, runCommand } from '../../lib/run-command.ts';

/** One agent, ready to be asked. `token` never leaves this process except to this host's URL. */
export interface FleetTarget {
  name: string;
  /** Base URL without a trailing slash. */
  url: string;
  tags: string[];
  token?: string;
  ca?: string;
  auth: 'token' | 'none';
  tls: 'system' | 'ca-file' | 'none';
  /** Why this host cannot be asked (its token or CA file is unusable); it is then reported as an error. */
  problem?: string;
  /** Set when Prometheus named a URL the fleet file does not allow: reported "Not allowed". */
  notAllowed?: true;
}

/** A Prometheus that scrapes the agents, ready to be asked (docs/FLEET.md). */
export interface PrometheusTarget {
  /** Base URL without a trailing slash. */
  url: string;
  /** The Authorization header for Prometheus (Bearer or Basic), never logged or returned. */
  authorization?: string;
  ca?: string;
  /** Label matchers without braces, e.g. `job="powerplan"`. */
  selector: string;
  hostLabel: string;
  tagsLabel: string;
  lookback: string;
  /** How the agents named by Prometheus are reached for a change: their token file(s) and CA. */
  agents: PrometheusSource['agents'];
}

export interface Fleet {
  source: string;
  hosts: FleetTarget[];
  /** Set when the fleet comes from Prometheus; `hosts` is then empty (Prometheus names them). */
  prometheus?: PrometheusTarget;
}

/** A fleet file: the agents it names, or the Prometheus that names them. */
export interface FleetFileContent {
  hosts: FleetHostEntry[];
  prometheus?: PrometheusSource;
}

const MAX_FLEET_BYTES = 1024 * 1024;
const MAX_TOKEN_BYTES = 4096;
const MAX_CA_BYTES = 1024 * 1024;
/** RFC 6750 b64token: what may follow `Bearer ` (so a token can never inject a header). */
const B64TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;

const parseJson = (text: string, what: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new PowerPlanError('invalid_input', `${what} is not valid JSON (${(e as Error).message}).`);
  }
};

/** Reads a fleet file, validated; names the host and the field in every error. */
export const readFleetFile = async (path: string): Promise<FleetFileContent> => {
  const what = `The fleet file ${path}`;
  const json = parseJson(
    await readCarefully(path, { what: 'The fleet file', maxBytes: MAX_FLEET_BYTES }),
    what,
  );
  const parsed = FleetFile.safeParse(json);
  if (!parsed.success) {
    // `hosts.2.url` reads better as `hosts[2] (db3).url`.
    const hosts = (json as { hosts?: { name?: unknown }[] } | null)?.hosts;
    const named = parsed.error.issues.map((i) => {
      if (i.path[0] === 'hosts' && typeof i.path[1] === 'number') {
        const n = hosts?.[i.path[1]]?.name;
        const label = `hosts[${i.path[1]}]${typeof n === 'string' ? ` (${n})` : ''}`;
        return { ...i, path: [label, ...i.path.slice(2)] };
      }
      return i;
    });
    throw new PowerPlanError(
      'invalid_input',
      `${what} is not valid: ${describeZodError({ issues: named } as never, 'file')}`,
    );
  }
  const base = dirname(resolve(path));
  const at = (file: string | undefined) => (file ? resolve(base, file) : undefined);
  const p = parsed.data.prometheus;
  return {
    hosts: (parsed.data.hosts ?? []).map((h) => ({
      ...h,
      ...(h.tokenFile ? { tokenFile: at(h.tokenFile) } : {}),
      ...(h.caFile ? { caFile: at(h.caFile) } : {}),
    })),
    ...(p
      ? {
          prometheus: {
            ...p,
            ...(p.tokenFile ? { tokenFile: at(p.tokenFile) } : {}),
            ...(p.caFile ? { caFile: at(p.caFile) } : {}),
            ...(p.basicAuth
              ? { basicAuth: { ...p.basicAuth, passwordFile: at(p.basicAuth.passwordFile)! } }
              : {}),
            agents: {
              ...(p.agents.tokenFile ? { tokenFile: at(p.agents.tokenFile) } : {}),
              ...(p.agents.tokenDir ? { tokenDir: at(p.agents.tokenDir) } : {}),
              ...(p.agents.caFile ? { caFile: at(p.agents.caFile) } : {}),
              ...(p.agents.allow ? { allow: p.agents.allow } : {}),
            },
          },
        }
      : {}),
  };
};

interface InventoryJson {
  _meta?: { hostvars?: Record<string, Record<string, unknown>> };
  [group: string]: { hosts?: string[]; children?: string[] } | unknown;
}

/** Groups of each host, parents included (ansible-inventory lists a host under its own groups only). */
const groupsOf = (inv: InventoryJson): Map<string, Set<string>> => {
  const groups = Object.entries(inv).filter(([k]) => k !== '_meta') as [
    string,
    { hosts?: string[]; children?: string[] },
  ][];
  const direct = new Map(groups.map(([g, v]) => [g, v]));
  const memo = new Map<string, Set<string>>();
  const hostsIn = (g: string, seen = new Set<string>()): Set<string> => {
    const hit = memo.get(g);
    if (hit) return hit;
    const out = new Set<string>(direct.get(g)?.hosts ?? []);
    seen.add(g);
    for (const child of direct.get(g)?.children ?? []) {
      if (!seen.has(child)) for (const h of hostsIn(child, seen)) out.add(h);
    }
    memo.set(g, out);
    return out;
  };
  const byHost = new Map<string, Set<string>>();
  for (const [g] of groups) {
    if (g === 'all' || g === 'ungrouped') continue;
    for (const h of hostsIn(g)) {
      if (!byHost.has(h)) byHost.set(h, new Set());
      byHost.get(h)!.add(g);
    }
  }
  return byHost;
};

/**
 * Fleet entries from an Ansible inventory: every host with `powerplan_url`; `powerplan_token_file`,
 * `powerplan_token_env`, `powerplan_ca_file` as in the fleet file; its groups become tags.
 */
export const readAnsibleInventory = async (
  path: string,
  run: RunFn = runCommand,
): Promise<FleetHostEntry[]> => {
  const fail = (why: string) => new PowerPlanError('invalid_input', `The Ansible inventory ${path}: ${why}`);
  let out: Awaited<ReturnType<RunFn>>;
  try {
    out = await run('ansible-inventory', ['--list', '-i', path], {
      timeoutMs: 60_000,
      maxBuffer: 32 * 1024 * 1024,
    });
  } catch (e) {
    throw fail(
      (e as { notFound?: boolean }).notFound
        ? 'ansible-inventory is not installed (it comes with ansible-core).'
        : `ansible-inventory failed (${(e as Error).message}).`,
    );
  }
  if (out.exitCode !== 0)
    throw fail(`ansible-inventory failed: ${out.stderr.toString('utf8').trim().slice(0, 500)}`);
  const inv = parseJson(
    out.stdout.toString('utf8'),
    `The output of ansible-inventory for ${path}`,
  ) as InventoryJson;
  const groups = groupsOf(inv);
  const hostvars = inv._meta?.hostvars ?? {};
  const entries: unknown[] = [];
  for (const [host, vars] of Object.entries(hostvars)) {
    if (vars.powerplan_url === undefined) continue;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    entries.push({
      name: host,
      url: vars.powerplan_url,
      ...(str(vars.powerplan_token_file) ? { tokenFile: vars.powerplan_token_file } : {}),
      ...(str(vars.powerplan_token_env) ? { tokenEnv: vars.powerplan_token_env } : {}),
      ...(str(vars.powerplan_ca_file) ? { caFile: vars.powerplan_ca_file } : {}),
      tags: [...(groups.get(host) ?? [])].filter((g) => FLEET_NAME.test(g)).sort(),
    });
  }
  if (!entries.length) throw fail('no host has the variable powerplan_url.');
  const parsed = FleetFile.safeParse({ hosts: entries });
  if (!parsed.success) throw fail(describeZodError(parsed.error, 'inventory'));
  return parsed.data.hosts ?? [];
};

/** A bearer token from a file read with care: one line of RFC 6750 characters. */
const readToken = async (path: string, what: string): Promise<string> => {
  const token = (await readCarefully(path, { what, maxBytes: MAX_TOKEN_BYTES, secret: true })).trim();
  if (!B64TOKEN.test(token))
    throw new Error(
      `${what} (${path}) does not hold a bearer token (one line of letters, digits and -._~+/).`,
    );
  return token;
};

/** PEM CA certificate(s) from a file read with care. */
const readCa = async (path: string, what: string): Promise<string> => {
  const ca = await readCarefully(path, { what, maxBytes: MAX_CA_BYTES });
  if (!ca.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`${what} (${path}) holds no PEM certificate.`);
  return ca;
};

/** Reads the host's token and CA; a problem is kept on the host, never thrown for the fleet. */
export const resolveTarget = async (h: FleetHostEntry): Promise<FleetTarget> => {
  const target: FleetTarget = {
    name: h.name,
    url: h.url.replace(/\/+$/, ''),
    tags: h.tags,
    auth: h.tokenFile || h.tokenEnv ? 'token' : 'none',
    tls: h.url.startsWith('https:') ? (h.caFile ? 'ca-file' : 'system') : 'none',
  };
  try {
    if (h.tokenFile) {
      target.token = await readToken(h.tokenFile, `The token file of ${h.name}`);
    } else if (h.tokenEnv) {
      const token = secretFromEnvironment(h.tokenEnv)?.trim();
      if (!token) throw new Error(`The variable ${h.tokenEnv} (tokenEnv of ${h.name}) is not set.`);
      if (!B64TOKEN.test(token) || token.length > MAX_TOKEN_BYTES)
        throw new Error(
          `The token of ${h.name} is not a bearer token (one line of letters, digits and -._~+/).`,
        );
      target.token = token;
    }
    if (h.caFile) target.ca = await readCa(h.caFile, `The CA file of ${h.name}`);
  } catch (e) {
    target.problem = (e as Error).message;
  }
  return target;
};

/** The Prometheus source with its credentials and CA read; a file that cannot be read fails the call. */
const resolvePrometheus = async (p: PrometheusSource): Promise<PrometheusTarget> => {
  try {
    let authorization: string | undefined;
    if (p.tokenFile) authorization = `Bearer ${await readToken(p.tokenFile, 'The Prometheus token file')}`;
    if (p.basicAuth) {
      const password = (
        await readCarefully(p.basicAuth.passwordFile, {
          what: 'The Prometheus password file',
          maxBytes: MAX_TOKEN_BYTES,
          secret: true,
        })
      ).replace(/\r?\n$/, '');
      if (/[\p{Cc}]/u.test(password))
        throw new Error(`The Prometheus password file (${p.basicAuth.passwordFile}) must hold one line.`);
      authorization = `Basic ${Buffer.from(`${p.basicAuth.username}:${password}`).toString('base64')}`;
    }
    return {
      url: p.url.replace(/\/+$/, ''),
      ...(authorization ? { authorization } : {}),
      ...(p.caFile ? { ca: await readCa(p.caFile, 'The Prometheus CA file') } : {}),
      selector: p.selector,
      hostLabel: p.hostLabel,
      tagsLabel: p.tagsLabel,
      lookback: p.lookback,
      agents: p.agents,
    };
  } catch (e) {
    if (e instanceof PowerPlanError) throw e;
    throw new PowerPlanError('invalid_input', `Not configured: ${(e as Error).message}`);
  }
};

/** The whole fleet as configured; an error when neither a fleet file nor an inventory is. */
export const loadFleet = async (
  config: Pick<Config, 'fleet' | 'ansibleInventory'>,
  run: RunFn = runCommand,
): Promise<Fleet> => {
  if (!config.fleet && !config.ansibleInventory) {
    throw new PowerPlanError(
      'unsupported',
      'No fleet is configured: name a fleet file with POWERPLAN_FLEET_FILE (CLI: --fleet FILE) or an Ansible ' +
        'inventory with POWERPLAN_ANSIBLE_INVENTORY (--ansible-inventory FILE); see docs/FLEET.md.',
    );
  }
  const file = config.fleet ? await readFleetFile(config.fleet) : undefined;
  if (file?.prometheus) {
    if (config.ansibleInventory)
      throw new PowerPlanError(
        'invalid_input',
        `The fleet file ${config.fleet} names a Prometheus server, which names the hosts: an Ansible inventory cannot be added to it.`,
      );
    return {
      source: `Prometheus ${file.prometheus.url} (fleet file ${config.fleet})`,
      hosts: [],
      prometheus: await resolvePrometheus(file.prometheus),
    };
  }
  const entries = [
    ...(file?.hosts ?? []),
    ...(config.ansibleInventory ? await readAnsibleInventory(config.ansibleInventory, run) : []),
  ];
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.name.toLowerCase()))
      throw new PowerPlanError(
        'invalid_input',
        `The host '${e.name}' is named twice (in the fleet file and the Ansible inventory).`,
      );
    seen.add(e.name.toLowerCase());
  }
  return {
    source: [
      config.fleet && `fleet file ${config.fleet}`,
      config.ansibleInventory && `Ansible inventory ${config.ansibleInventory}`,
    ]
      .filter(Boolean)
      .join(' + '),
    hosts: await Promise.all(entries.map(resolveTarget)),
  };
};
