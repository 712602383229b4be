/**
 * The fleet fan-out: asks every agent named by the fleet, at most `fleetConcurrency` at a time,
 * each within `fleetTimeoutMs` from the moment it is asked, and always answers with every host's
 * outcome. Status answers are cached for a few seconds (and shared by callers asking at the same
 * moment); a plan change drops the cache of the hosts it touched. Tokens are never logged or returned.
 */
import { setMaxListeners } from 'node:events';
import type http from 'node:http';
import type { Config } from '../../config.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import {
  type FleetHostListAll,
  type FleetHostStatus,
  type FleetSetAll,
  type FleetSetHost,
  type FleetStatusAll,
  fleetStatus,
  type PrometheusTargetsAll,
} from '../../domain/fleet.ts';
import { SetPlanResult } from '../../domain/schemas.ts';
import type { Logger } from '../../lib/log.ts';
import { mapLimited } from '../../lib/map-limited.ts';
import { type Snapshot, Snapshots } from '../../lib/paging.ts';
import { type RunFn, runCommand } from '../../lib/run-command.ts';
import { linkedSignal } from '../../lib/signal.ts';
import { AgentFailure, asAgentFailure } from './failure.ts';
import { type Fleet, type FleetTarget, loadFleet, type PrometheusTarget, resolveTarget } from './file.ts';
import { expect, hostStatus } from './status.ts';

export const STATUS_CACHE_MS = 3_000;
/**
 * Status answers are kept this long for the pages after the first (two at most: a status of
 * 10,000 hosts takes some megabytes); a cursor whose answer is gone pages on over a fresh one.
 */
const STATUS_PAGES_MS = 120_000;
/** The outcome of a change is kept this long for its further pages (it cannot be asked again). */
const SET_PAGES_MS = 600_000;
/** The loaded fleet (files, tokens, the inventory's subprocess) is reused this long. */
const FLEET_CACHE_MS = 3_000;

export interface Selection {
  hosts?: string[] | undefined;
  tags?: string[] | undefined;
}

/** The hosts a selection names: by name (every name must exist) and by tag (any of them). */
export const select = <H extends { name: string; tags: string[] }>(all: H[], sel: Selection): H[] => {
  const fleet = { hosts: all };
  const byName = new Map(fleet.hosts.map((h) => [h.name.toLowerCase(), h]));
  const unknown = (sel.hosts ?? []).filter((n) => !byName.has(n.toLowerCase()));
  if (unknown.length)
    throw new PowerPlanError(
      'invalid_input',
      `hosts: no host named ${unknown.map((n) => `'${n}'`).join(', ')} in the fleet.`,
      {
        hosts: fleet.hosts.map((h) => h.name),
      },
    );
  const allTags = new Set(fleet.hosts.flatMap((h) => h.tags.map((t) => t.toLowerCase())));
  const noTag = (sel.tags ?? []).filter((t) => !allTags.has(t.toLowerCase()));
  if (noTag.length)
    throw new PowerPlanError(
      'invalid_input',
      `tags: no host has the tag ${noTag.map((t) => `'${t}'`).join(', ')}.`,
      {
        tags: [...allTags].sort(),
      },
    );
  const names = sel.hosts?.length ? new Set(sel.hosts.map((n) => n.toLowerCase())) : undefined;
  const tags = sel.tags?.length ? new Set(sel.tags.map((t) => t.toLowerCase())) : undefined;
  return fleet.hosts.filter(
    (h) =>
      (!names || names.has(h.name.toLowerCase())) && (!tags || h.tags.some((t) => tags.has(t.toLowerCase()))),
  );
};

export class FleetService {
  private readonly config: Config;
  private readonly log: Logger;
  private readonly run: RunFn;
  private fleet: { at: number; value: Promise<Fleet> } | undefined;
  private readonly agents = new Map<string, http.Agent>();
  private readonly statusCache = new Map<string, { at: number; value: Promise<FleetHostStatus> }>();
  private readonly statusPages = new Snapshots<FleetStatusAll>(STATUS_PAGES_MS, 2);
  private readonly setPages = new Snapshots<FleetSetAll>(SET_PAGES_MS, 4);
  /** A signal that never aborts, for the shared status asks. */
  private readonly idle = new AbortController().signal;

  constructor(config: Config, log: Logger, run: RunFn = runCommand) {
    this.config = config;
    this.log = log;
    this.run = run;
    // Every host asked at once listens to it (up to fleetConcurrency).
    setMaxListeners(0, this.idle);
  }

  /** The fleet as configured, re-read when older than a few seconds. */
  load(): Promise<Fleet> {
    if (!this.fleet || Date.now() - this.fleet.at > FLEET_CACHE_MS) {
      const value = loadFleet(this.config, this.run);
      this.fleet = { at: Date.now(), value };
      value.catch(() => {
        if (this.fleet?.value === value) this.fleet = undefined;
      });
    }
    return this.fleet.value;
  }

  /** The HTTP client (node:http/https), loaded on the first fleet call. */
  private client: Promise<typeof import('./client.ts')> | undefined;

  private agent(
    t: Pick<FleetTarget, 'url' | 'ca'>,
    client: typeof import('./client.ts'),
    maxSockets = 4,
  ): http.Agent {
    // Keyed by everything that decides the connection, so an edited fleet file gets a fresh agent.
    const key = `${t.url}\n${t.ca ?? ''}`;
    let a = this.agents.get(key);
    if (!a) {
      a = client.agentFor(t, maxSockets);
      this.agents.set(key, a);
    }
    return a;
  }

  /** The Prometheus module and how to ask the fleet's Prometheus, loaded on the first call. */
  private async prometheus(target: PrometheusTarget) {
    this.client ??= import('./client.ts');
    const [client, status, agents] = await Promise.all([
      this.client,
      import('./prometheus.ts'),
      import('./prometheus-agents.ts'),
    ]);
    const prom = { ...status, ...agents };
    // Room for the status' queries at once.
    const ask = {
      target,
      agent: this.agent(target, client, 16),
      timeoutMs: this.config.fleetTimeoutMs,
      maxBytes: this.config.fleetMaxAnswerMib * 1024 * 1024,
    };
    return { prom, ask };
  }

  /** The hosts to change: the fleet's, or the agents Prometheus scrapes, with their tokens read. */
  private async targets(fleet: Fleet): Promise<FleetTarget[]> {
    if (!fleet.prometheus) return fleet.hosts;
    const { prom, ask } = await this.prometheus(fleet.prometheus);
    return Promise.all(
      (await prom.discoverAgents(ask)).map((h) =>
        h.notAllowed ? prom.notAllowedTarget(h) : resolveTarget(h),
      ),
    );
  }

  /** Runs `fn` for one host within the per-host timeout (counted from now), linked to `signal`. */
  private async within<R>(
    t: FleetTarget,
    signal: AbortSignal,
    fn: (ask: (path: string, method?: 'GET' | 'PUT', body?: unknown) => Promise<unknown>) => Promise<R>,
  ): Promise<R> {
    if (t.problem)
      throw new AgentFailure('error', {
        title: t.notAllowed ? 'Not allowed' : 'Not configured',
        detail: t.problem,
      });
    const link = linkedSignal([signal]);
    const ms = this.config.fleetTimeoutMs;
    const timer = setTimeout(
      () =>
        link.abort(
          new AgentFailure('unreachable', { title: 'Timed out', detail: `No answer within ${ms} ms.` }),
        ),
      ms,
    );
    try {
      this.client ??= import('./client.ts');
      const client = await this.client;
      return await fn((path, method = 'GET', body) =>
        client.askAgent(t, this.agent(t, client), { method, path, body, signal: link.signal }),
      );
    } finally {
      clearTimeout(timer);
      link.release();
    }
  }

  private statusOf(t: FleetTarget, signal: AbortSignal): Promise<FleetHostStatus> {
    const key = `${t.name}\n${t.url}`;
    const hit = this.statusCache.get(key);
    // An answer in flight is shared; a settled one is kept for STATUS_CACHE_MS from when it came.
    if (hit && Date.now() - hit.at < STATUS_CACHE_MS) return hit.value;
    const entry = { at: Number.POSITIVE_INFINITY, value: hostStatus(t, (fn) => this.within(t, signal, fn)) };
    this.statusCache.set(key, entry);
    void entry.value.then((s) => {
      entry.at = Date.now();
      this.log.debug('fleet host', { host: t.name, status: s.status, durationMs: s.durationMs });
    });
    return entry.value;
  }

  /** The configured hosts (no token, only whether one is sent); contacts no host. */
  async hosts(sel: Selection): Promise<FleetHostListAll> {
    const fleet = await this.load();
    return {
      source: fleet.source,
      hosts: select(await this.targets(fleet), sel).map((h) => ({
        name: h.name,
        url: h.url,
        tags: h.tags,
        auth: h.auth,
        tls: h.tls,
      })),
    };
  }

  /** The hosts as Prometheus file_sd / http_sd target groups (the agent's /metrics); contacts no host. */
  async prometheusTargets(sel: Selection): Promise<PrometheusTargetsAll> {
    const fleet = await this.load();
    if (fleet.prometheus)
      throw new PowerPlanError(
        'unsupported',
        `The fleet comes from Prometheus (${fleet.prometheus.url}), which already has its targets: there is nothing to hand it.`,
      );
    const groups = select(fleet.hosts, sel).map((h) => {
      const url = new URL(h.url);
      const port = url.port || (url.protocol === 'https:' ? '443' : '80');
      return {
        targets: [`${url.hostname.includes(':') ? `[${url.hostname}]` : url.hostname}:${port}`],
        labels: {
          __scheme__: url.protocol.slice(0, -1),
          __metrics_path__: `${url.pathname.replace(/\/+$/, '')}/metrics`,
          fleet_host: h.name,
          ...(h.tags.length ? { fleet_tags: `,${h.tags.join(',')},` } : {}),
        },
      };
    });
    return { groups };
  }

  /**
   * Status answers are shared (cached, and by callers asking at the same moment), so one caller
   * going away does not cancel them: each is bounded by the per-host timeout anyway.
   */
  async status(sel: Selection): Promise<FleetStatusAll> {
    const fleet = await this.load();
    if (fleet.prometheus) {
      const { prom, ask } = await this.prometheus(fleet.prometheus);
      return prom.prometheusStatus(ask, (seen) => select(seen, sel));
    }
    const targets = select(fleet.hosts, sel);
    const hosts = await mapLimited(targets, this.config.fleetConcurrency, (t) => this.statusOf(t, this.idle));
    return fleetStatus({ kind: 'agents', name: fleet.source }, hosts);
  }

  /** The status kept under `id` for its further pages, or a fresh one. */
  statusSnapshot(sel: Selection, id: string | undefined): Promise<Snapshot<FleetStatusAll>> {
    return this.statusPages.keptOr(id, () => this.status(sel));
  }

  /** A change's outcome kept under `id` (changing nothing), or, without an id, the change made now. */
  setSnapshot(
    input: Selection & { plan: string; dryRun: boolean },
    signal: AbortSignal,
    id: string | undefined,
  ): Promise<Snapshot<FleetSetAll>> {
    if (id !== undefined && !this.setPages.get(id))
      throw new PowerPlanError(
        'invalid_input',
        "cursor: that change's outcome is no longer kept (10 minutes); get_fleet_status shows every host's plan now.",
      );
    return this.setPages.keptOr(id, () => this.setPlan(input, signal));
  }

  async setPlan(
    input: Selection & { plan: string; dryRun: boolean },
    signal: AbortSignal,
  ): Promise<FleetSetAll> {
    const targets = select(await this.targets(await this.load()), input);
    // One listener on the caller's signal for the whole change; the hosts listen to this one.
    const batch = linkedSignal([signal]);
    setMaxListeners(0, batch.signal);
    const hosts = await mapLimited(
      targets,
      this.config.fleetConcurrency,
      async (t): Promise<FleetSetHost> => {
        const base = { name: t.name, url: t.url, tags: t.tags };
        try {
          const r = await this.within(t, batch.signal, (ask) =>
            ask('/v1/plans/active', 'PUT', { plan: input.plan, dryRun: input.dryRun }),
          ).then(expect(SetPlanResult, 'plan change'));
          return {
            ...base,
            status: 'ok',
            changed: r.changed,
            before: r.before,
            after: r.after,
            ...(r.warnings?.length ? { warnings: r.warnings } : {}),
            reportedByAgent: ['/before', '/after', ...(r.warnings?.length ? ['/warnings'] : [])],
          };
        } catch (e) {
          const f = asAgentFailure(e);
          return {
            ...base,
            status: f.status,
            changed: null,
            before: null,
            after: null,
            error: f.problem,
            reportedByAgent: f.reportedByAgent,
          };
        } finally {
          if (!input.dryRun) this.statusCache.delete(`${t.name}\n${t.url}`);
        }
      },
    ).finally(batch.release);
    this.log.info('fleet set', {
      plan: input.plan,
      dryRun: input.dryRun,
      hosts: hosts
        .map((h) => `${h.name}:${h.error ? h.status : h.changed ? 'changed' : 'unchanged'}`)
        .join(','),
    });
    return {
      plan: input.plan,
      dryRun: input.dryRun,
      summary: {
        total: hosts.length,
        changed: hosts.filter((h) => h.changed === true).length,
        unchanged: hosts.filter((h) => h.changed === false).length,
        failed: hosts.filter((h) => h.error).length,
      },
      hosts,
    };
  }

  close(): void {
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }
}
