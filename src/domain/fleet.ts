/**
 * The fleet: the file that names the agents (one powerplan service per server) and the shapes of
 * the fleet operations' answers. A fleet answer always lists every host it was asked about, with
 * its own outcome: one dead or slow host never hides the others.
 */
import { z } from 'zod';
import { DesiredSummary, Owner, Plan, PlanKind } from './schemas.ts';

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
  })
  .strict()
  .refine((a) => !(a.tokenFile && a.tokenDir), { message: 'give tokenFile or tokenDir, not both' });

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

const Reachability = z.enum(['ok', 'unreachable', 'unauthorized', 'error']).meta({
  id: 'FleetHostReachability',
  description:
    'ok: the agent answered; unreachable: no answer in time (refused, unknown name, timed out); ' +
    'unauthorized: the agent refused the token (missing, wrong, revoked or lacking the scope); error: any other failure.',
});

export const FleetError = z
  .object({
    title: z.string().describe('What kind of failure, e.g. "Timed out", "Unauthorized", "Conflict".'),
    detail: z.string().describe("What went wrong on this host, in the agent's words when it answered."),
    status: z.number().int().optional().describe('The HTTP status the agent answered with, if it answered.'),
  })
  .meta({ id: 'FleetError', description: 'Why one host has no answer (its problem title and detail).' });
export type FleetError = z.infer<typeof FleetError>;

const hostBase = {
  name: FleetHostName,
  url: z.string().describe("The agent's base URL."),
  tags: z.array(z.string()),
};

export const FleetHost = z
  .object({
    ...hostBase,
    auth: z
      .enum(['token', 'none'])
      .describe('token: a bearer token is sent to this host (never shown); none: no token.'),
    tls: z
      .enum(['system', 'ca-file', 'none'])
      .describe("How the agent's certificate is checked: system trust, a CA file, or plain HTTP."),
  })
  .meta({ id: 'FleetHost', description: 'One agent of the fleet, as the fleet file names it.' });

export const FleetHostList = z
  .object({
    source: z.string().describe('Where the hosts come from: the fleet file and/or an Ansible inventory.'),
    hosts: z.array(FleetHost),
  })
  .meta({ id: 'FleetHostList' });
export type FleetHostList = z.infer<typeof FleetHostList>;

export const FleetHostStatus = z
  .object({
    ...hostBase,
    status: Reachability,
    checkedAt: z
      .string()
      .describe(
        'ISO 8601 time the agent was asked (answers are cached for a few seconds); from Prometheus, the time of its last scrape.',
      ),
    durationMs: z
      .number()
      .describe('How long the agent took to answer, or until it was given up (from Prometheus: the scrape).'),
    lastSampleAt: z
      .string()
      .nullable()
      .optional()
      .describe(
        'From Prometheus, for a host that is not ok: ISO 8601 time of its newest sample (its last good scrape), how old ' +
          'the last known state is; null when none is left within the lookback.',
      ),
    plan: Plan.pick({ id: true, name: true, kind: true })
      .nullable()
      .describe('The plan in force; null when not ok or the host exposes no plan.'),
    owner: Owner.nullable(),
    canSet: z.boolean().nullable().describe('True when the agent can change the plan there.'),
    policyManaged: z
      .boolean()
      .nullable()
      .describe('True when a policy (e.g. group policy) sets the plan there and reverts changes.'),
    holds: z.number().int().nullable().describe('Holds in force there (hold_power_plan).'),
    drift: DesiredSummary.shape.status
      .nullable()
      .describe('The desired-state status when a desired plan is set there (drift, in-desired-state, ...).'),
    burstPenaltyPercent: z
      .number()
      .nullable()
      .describe("The latest stored benchmark's burst penalty (%); null without a benchmark."),
    recommendation: z
      .object({
        summary: z.string(),
        changeRecommended: z.boolean(),
        kind: PlanKind.nullable().describe('The kind of the recommended plan.'),
      })
      .nullable()
      .describe("The agent's advice for the database workload, from its latest benchmark or its rules."),
    edited: z
      .boolean()
      .nullable()
      .optional()
      .describe(
        'True when the plan in force is a built-in plan whose key settings were edited; null when unknown.',
      ),
    mismatches: z
      .number()
      .int()
      .nullable()
      .optional()
      .describe(
        "Settings that did not take effect at the agent's last switch (0: it took effect); null when not checked.",
      ),
    controlledBy: z
      .enum(['os', 'firmware', 'hypervisor', 'unknown'])
      .nullable()
      .optional()
      .describe('Who decides the processor clock and idle states there.'),
    error: FleetError.optional().describe('Present when status is not ok.'),
  })
  .meta({ id: 'FleetHostStatus', description: "One agent's answer to the fleet status." });
export type FleetHostStatus = z.infer<typeof FleetHostStatus>;

export const FleetSource = z
  .object({
    kind: z
      .enum(['agents', 'prometheus'])
      .describe(
        "agents: every agent was asked; prometheus: the answer comes from Prometheus' latest scrapes.",
      ),
    name: z.string().describe('The fleet file and/or Ansible inventory, or the Prometheus URL.'),
    evaluatedAt: z
      .string()
      .optional()
      .describe('Prometheus: the ISO 8601 instant the queries were evaluated at.'),
    queries: z.number().int().optional().describe('Prometheus: how many instant queries the answer took.'),
  })
  .meta({ id: 'FleetSource', description: 'Where a fleet answer comes from.' });
export type FleetSource = z.infer<typeof FleetSource>;

export const FleetStatus = z
  .object({
    source: FleetSource,
    summary: z
      .object({
        total: z.number().int(),
        ok: z.number().int(),
        unreachable: z.number().int(),
        unauthorized: z.number().int(),
        error: z.number().int(),
        changeRecommended: z.number().int().describe('Hosts whose advice is to switch plans.'),
      })
      .describe('Counts over the hosts asked.'),
    hosts: z.array(FleetHostStatus).describe('In the order of the fleet file.'),
  })
  .meta({ id: 'FleetStatus', description: 'The power plan status of every agent asked, with counts.' });
export type FleetStatus = z.infer<typeof FleetStatus>;

export const FleetSetHost = z
  .object({
    ...hostBase,
    status: Reachability,
    changed: z.boolean().nullable().describe('True when the plan was (or, with dryRun, would be) changed.'),
    before: Plan.nullable(),
    after: Plan.nullable(),
    warnings: z.array(z.string()).optional(),
    error: FleetError.optional().describe('Present when this host was not set (or not checked).'),
  })
  .meta({ id: 'FleetSetHost', description: 'The outcome of the plan change on one host.' });
export type FleetSetHost = z.infer<typeof FleetSetHost>;

export const FleetSetResult = z
  .object({
    plan: z.string().describe('The plan asked for, as given.'),
    dryRun: z.boolean(),
    summary: z
      .object({
        total: z.number().int(),
        changed: z.number().int().describe('Hosts changed (or, with dryRun, that would change).'),
        unchanged: z.number().int().describe('Hosts already on the plan.'),
        failed: z.number().int().describe('Hosts with an error: unreachable, unauthorized or refused.'),
      })
      .describe('Counts over the hosts asked.'),
    hosts: z.array(FleetSetHost),
  })
  .meta({
    id: 'FleetSetResult',
    description: 'Per host: changed, before and after, or the error. Never all-or-nothing.',
  });
export type FleetSetResult = z.infer<typeof FleetSetResult>;

export const PrometheusTargetGroup = z
  .object({
    targets: z.array(z.string()).describe('host:port of the agent.'),
    labels: z
      .record(z.string(), z.string())
      .describe('__scheme__, __metrics_path__, fleet_host and (when tagged) fleet_tags, as ",sql,prod,".'),
  })
  .meta({ id: 'PrometheusTargetGroup', description: 'One file_sd / http_sd target group.' });

export const PrometheusTargets = z
  .object({
    groups: z
      .array(PrometheusTargetGroup)
      .describe('One group per host; this array alone is the file_sd / http_sd document.'),
  })
  .meta({
    id: 'PrometheusTargets',
    description: 'The fleet as Prometheus service discovery target groups.',
  });
export type PrometheusTargets = z.infer<typeof PrometheusTargets>;
