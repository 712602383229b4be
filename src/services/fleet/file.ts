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
import { FLEET_NAME, FleetFile, type FleetHostEntry } from '../../domain/fleet.ts';
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
}

export interface Fleet {
  source: string;
  hosts: FleetTarget[];
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

/** Reads the entries of a fleet file, validated; names the host and the field in every error. */
export const readFleetFile = async (path: string): Promise<FleetHostEntry[]> => {
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
  return parsed.data.hosts.map((h) => ({
    ...h,
    ...(h.tokenFile ? { tokenFile: resolve(base, h.tokenFile) } : {}),
    ...(h.caFile ? { caFile: resolve(base, h.caFile) } : {}),
  }));
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
  return parsed.data.hosts;
};

/** Reads the host's token and CA; a problem is kept on the host, never thrown for the fleet. */
const resolveTarget = async (h: FleetHostEntry): Promise<FleetTarget> => {
  const target: FleetTarget = {
    name: h.name,
    url: h.url.replace(/\/+$/, ''),
    tags: h.tags,
    auth: h.tokenFile || h.tokenEnv ? 'token' : 'none',
    tls: h.url.startsWith('https:') ? (h.caFile ? 'ca-file' : 'system') : 'none',
  };
  try {
    let token: string | undefined;
    if (h.tokenFile) {
      token = (
        await readCarefully(h.tokenFile, {
          what: `The token file of ${h.name}`,
          maxBytes: MAX_TOKEN_BYTES,
          secret: true,
        })
      ).trim();
    } else if (h.tokenEnv) {
      token = secretFromEnvironment(h.tokenEnv)?.trim();
      if (!token) throw new Error(`The variable ${h.tokenEnv} (tokenEnv of ${h.name}) is not set.`);
    }
    if (token !== undefined) {
      if (!B64TOKEN.test(token) || token.length > MAX_TOKEN_BYTES)
        throw new Error(
          `The token of ${h.name} is not a bearer token (one line of letters, digits and -._~+/).`,
        );
      target.token = token;
    }
    if (h.caFile) {
      target.ca = await readCarefully(h.caFile, { what: `The CA file of ${h.name}`, maxBytes: MAX_CA_BYTES });
      if (!target.ca.includes('-----BEGIN CERTIFICATE-----'))
        throw new Error(`The CA file of ${h.name} (${h.caFile}) holds no PEM certificate.`);
    }
  } catch (e) {
    target.problem = (e as Error).message;
  }
  return target;
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
  const entries = [
    ...(config.fleet ? await readFleetFile(config.fleet) : []),
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
