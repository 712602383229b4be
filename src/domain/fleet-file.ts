/**
 * The fleet file: the agents it names (one powerplan service per server), or the Prometheus that
 * scrapes them. Read like a token file (it decides where tokens go), validated as a whole, every
 * error naming the host and the field.
 */
import { z } from 'zod';
/** Host names and tags end up in tables, labels and log lines: keep them plain. */
export const FLEET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const nameRule = 'must be 1-63 letters, digits, dots, dashes or underscores, starting with a letter or digit';
/** A variable name for `tokenEnv`. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export const FleetHostName = z.string().regex(FLEET_NAME, nameRule);
export const FleetTag = z.string().regex(FLEET_NAME, nameRule);

/** A base URL: http(s), no credentials (`instead` says where they go), no query or fragment. */
const baseUrl = (example: string, instead: string) =>
  z.string().superRefine((text, ctx) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: `is not a URL (e.g. ${example})` });
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      ctx.addIssue({ code: 'custom', message: `must be http:// or https:// (got ${url.protocol})` });
    if (url.username || url.password)
      ctx.addIssue({ code: 'custom', message: `must not carry credentials (user:password@); ${instead}` });
    if (url.search || url.hash)
      ctx.addIssue({ code: 'custom', message: 'must not have a query or fragment' });
  });

/** An agent's base URL: http(s), no credentials, no query or fragment. */
export const AgentUrl = baseUrl('https://db1.example.com:8750', 'name a tokenFile or tokenEnv instead');

const filePath = z.string().min(1).max(4096);

/** A Prometheus label name (https://prometheus.io/docs/concepts/data_model/). */
const LabelName = z
  .string()
  .regex(/^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/, 'must be a Prometheus label name (letters, digits, _)');

/**
 * Label matchers selecting the agents' series, as in a PromQL selector: `job="powerplan"`, or
 * several, comma-separated (`job="powerplan", env=~"prod|staging"`); braces optional. Values in
 * double quotes; the metric name is not a matcher here (each query names its own).
 */
const MATCHER = String.raw`\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=~|!~|!=|=)\s*"(?:[^"\\\n]|\\.)*"\s*`;
const MATCHERS = new RegExp(String.raw`^\s*\{?(?:${MATCHER})(?:,${MATCHER})*,?\s*\}?\s*$`);
export const PromSelector = z
  .string()
  .max(2048)
  .regex(
    MATCHERS,
    'must be label matchers such as job="powerplan" (comma-separated; values in double quotes)',
  )
  .refine(
    (s) => !/(^|[{,\s])__name__\s*[=!]/.test(s),
    'must not match __name__ (the queries name the metrics)',
  )
  .transform((s) => s.trim().replace(/^\{/, '').replace(/\}$/, '').trim().replace(/,$/, ''));

/** A Prometheus duration: `1h`, `30m`, `1h30m`. */
const PromDuration = z
  .string()
  .regex(/^(?:\d{1,6}(?:ms|s|m|h|d|w|y))+$/, 'must be a Prometheus duration such as 30m, 1h or 1d');

/**
 * One entry of `agents.allow`: `host`, `host:port` or `scheme://host[:port][/path]`, where host may
 * begin with `*.` (one or more labels in front of the rest); an IPv6 address in brackets. Matched
 * by allowedAgentUrl below against the URLs Prometheus' targets name.
 */
const PATTERN =
  /^(?:(https?):\/\/)?(\*\.)?([A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?(\/[A-Za-z0-9._~%!$&'()*+,;=:@/-]*)?$/;
export const AgentPattern = z
  .string()
  .max(300)
  .regex(
    PATTERN,
    'must be host, host:port or http(s)://host[:port][/path] (host may start with *.), e.g. *.db.example.com:8750',
  )
  .refine((p) => (PATTERN.exec(p)?.[5] ?? '').split('/').every((seg) => seg !== '..' && seg !== '.'), {
    message: 'must not hold . or .. in its path',
  })
  .refine(
    (p) => !/^[^/]*\/[^/]/.test(p) || /^https?:\/\//.test(p),
    'a path needs a scheme (https://host/path)',
  );

/**
 * Whether `url` (an agent's base URL, as taken from a scrape URL) is one `patterns` allows: same
 * host (or, for `*.rest`, a name ending in `.rest`), the same port when the pattern names one (else
 * any), the same scheme when it names one, and a path equal to the pattern's path or below it.
 */
export const allowedAgentUrl = (url: URL, patterns: readonly string[]): boolean =>
  patterns.some((p) => {
    const m = PATTERN.exec(p);
    if (!m) return false;
    const [, scheme, wild, host = '', port, path] = m;
    if (scheme && `${scheme.toLowerCase()}:` !== url.protocol) return false;
    const name = url.hostname.toLowerCase();
    const want = host.toLowerCase();
    if (wild ? !name.endsWith(`.${want}`) : name !== want) return false;
    const actualPort = url.port || (url.protocol === 'https:' ? '443' : '80');
    if (port !== undefined && Number(port) !== Number(actualPort)) return false;
    const prefix = (path ?? '').replace(/\/+$/, '');
    const own = url.pathname.replace(/\/+$/, '');
    return !prefix || own === prefix || own.startsWith(`${prefix}/`);
  });

/** Where a Prometheus-sourced fleet finds the agents' tokens and CA, for the changes that go to them. */
export const PrometheusAgents = z
  .object({
    tokenFile: filePath
      .optional()
      .describe('One bearer token for every agent (a control token for fleet set).'),
    tokenDir: filePath
      .optional()
      .describe(
        'A directory holding one token file per host, named <host>.token (host as the host label names it).',
      ),
    caFile: filePath
      .optional()
      .describe("PEM CA certificate(s) to verify the agents' TLS certificates with."),
    allow: z
      .array(AgentPattern)
      .min(1)
      .max(1024)
      .optional()
      .describe(
        'The agent URLs a change may go to: host, host:port or scheme://host[:port][/path], host may start with *. (any subdomain).',
      ),
  })
  .strict()
  .refine((a) => !(a.tokenFile && a.tokenDir), { message: 'give tokenFile or tokenDir, not both' })
  .refine((a) => !(a.tokenFile || a.tokenDir) || a.allow, {
    path: ['allow'],
    message:
      "is required with tokenFile or tokenDir: list the agents' hosts (db1.example.com, *.db.example.com:8750, https://10.0.0.5:8750) " +
      "that Prometheus' targets may name, so that a target pointing elsewhere never receives the agents' token",
  });

/**
 * A Prometheus server that scrapes the agents: the fleet status is answered from its instant
 * queries, and the agents' URLs for a change come from its targets.
 */
export const PrometheusSource = z
  .object({
    url: baseUrl('https://prometheus.example.com:9090', 'name a tokenFile or basicAuth instead'),
    tokenFile: filePath.optional().describe('A file holding a bearer token for Prometheus.'),
    basicAuth: z
      .object({
        username: z
          .string()
          .regex(
            /^[^:\s\p{Cc}]{1,256}$/u,
            'must be 1-256 characters without spaces, colons or control characters',
          ),
        passwordFile: filePath,
      })
      .strict()
      .optional(),
    caFile: filePath.optional().describe("PEM CA certificate(s) to verify Prometheus' TLS certificate with."),
    selector: PromSelector.default('job="powerplan"'),
    hostLabel: LabelName.default('fleet_host').describe('The label whose value names the host.'),
    tagsLabel: LabelName.default('fleet_tags').describe('The label holding the tags, as ",sql,prod,".'),
    lookback: PromDuration.default('1h').describe(
      'How far back a host that is no longer scraped is still reported (as unreachable, with its last sample).',
    ),
    agents: PrometheusAgents.default({}),
  })
  .strict()
  .refine((p) => !(p.tokenFile && p.basicAuth), { message: 'give tokenFile or basicAuth, not both' });
export type PrometheusSource = z.infer<typeof PrometheusSource>;

export const FleetHostEntry = z
  .object({
    name: FleetHostName,
    url: AgentUrl,
    tokenFile: filePath.optional(),
    tokenEnv: z.string().regex(ENV_NAME, 'must be an environment variable name').optional(),
    tags: z.array(FleetTag).max(64).default([]),
    caFile: filePath.optional(),
  })
  .strict()
  .refine((h) => !(h.tokenFile && h.tokenEnv), { message: 'give tokenFile or tokenEnv, not both' });
export type FleetHostEntry = z.infer<typeof FleetHostEntry>;

/** The fleet file: the agents themselves (`hosts`), or the Prometheus that scrapes them (`prometheus`). */
export const FleetFile = z
  .object({ hosts: z.array(FleetHostEntry).max(10_000).optional(), prometheus: PrometheusSource.optional() })
  .strict()
  .superRefine((f, ctx) => {
    if (!f.hosts === !f.prometheus)
      ctx.addIssue({
        code: 'custom',
        message: f.hosts
          ? 'give hosts or prometheus, not both'
          : 'give hosts (the agents) or prometheus (a Prometheus server that scrapes them)',
      });
    const seen = new Map<string, number>();
    (f.hosts ?? []).forEach((h, i) => {
      const key = h.name.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['hosts', i, 'name'],
          message: `duplicate host name '${h.name}' (also hosts.${first})`,
        });
      else seen.set(key, i);
    });
  });
export type FleetFile = z.infer<typeof FleetFile>;
