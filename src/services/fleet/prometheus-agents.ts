/**
 * The agents a Prometheus-sourced fleet changes: Prometheus' active targets that the selector
 * matches, each agent's base URL taken from its scrape URL, its token and CA from the source's
 * `agents` settings. Prometheus' word alone never sends a token anywhere: an agent URL that the
 * fleet file's `agents.allow` does not allow is kept as a host that is "not allowed", without its
 * token, and nothing is sent to it.
 */
import { join } from 'node:path';
import { AgentUrl, allowedAgentUrl, FLEET_NAME, type FleetHostEntry } from '../../domain/fleet-file.ts';
import type { FleetTarget } from './file.ts';
import { call, instantQuery, type PrometheusAsk } from './prometheus-api.ts';
import { tagsOf } from './promql.ts';

/** An agent Prometheus names; `notAllowed` when its URL is not one the fleet file allows. */
export type DiscoveredAgent = FleetHostEntry & { notAllowed?: true };

/** A host whose URL the fleet file does not allow: reported as such, never asked, no token read. */
export const notAllowedTarget = (h: DiscoveredAgent): FleetTarget => ({
  name: h.name,
  url: h.url,
  tags: h.tags,
  auth: 'none',
  tls: h.url.startsWith('https:') ? 'system' : 'none',
  notAllowed: true,
  problem:
    `Prometheus names ${h.url} for ${h.name}, which agents.allow in the fleet file does not allow: nothing was sent to it. ` +
    'Add the host to agents.allow if it is one of your agents, or fix the target in Prometheus.',
});

interface ActiveTarget {
  labels: Record<string, string>;
  scrapeUrl: string;
}

/** A label set as one key, the metric name left out. */
const labelKey = (labels: Record<string, string>) =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([k]) => k !== '__name__')
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );

/**
 * The agents as fleet entries, from Prometheus' active targets that the selector matches (the
 * targets whose `up` series it selects): the base URL is the scrape URL without `/metrics`; the
 * token and CA come from the source's `agents` settings.
 */
export const discoverAgents = async (ask: PrometheusAsk): Promise<DiscoveredAgent[]> => {
  const t = ask.target;
  const [targets, up] = await Promise.all([
    call(ask, '/api/v1/targets?state=active') as Promise<{ activeTargets?: unknown }>,
    instantQuery(ask, `up{${t.selector}}`, Date.now() / 1000),
  ]);
  const selected = new Set(up.map((s) => labelKey(s.metric)));
  const active = (Array.isArray(targets?.activeTargets) ? targets.activeTargets : []) as ActiveTarget[];
  const out = new Map<string, DiscoveredAgent>();
  for (const a of active) {
    if (typeof a?.labels !== 'object' || typeof a.scrapeUrl !== 'string' || !selected.has(labelKey(a.labels)))
      continue;
    const name = a.labels[t.hostLabel];
    if (!name || !FLEET_NAME.test(name) || out.has(name)) continue;
    let url: string;
    try {
      const u = new URL(a.scrapeUrl);
      url = `${u.origin}${u.pathname.replace(/\/metrics\/?$/, '').replace(/\/+$/, '')}`;
    } catch {
      continue;
    }
    if (!AgentUrl.safeParse(url).success) continue;
    const allow = t.agents.allow;
    if (allow && !allowedAgentUrl(new URL(url), allow)) {
      out.set(name, { name, url, tags: tagsOf(a.labels[t.tagsLabel]), notAllowed: true });
      continue;
    }
    const tokenFile =
      t.agents.tokenFile ?? (t.agents.tokenDir ? join(t.agents.tokenDir, `${name}.token`) : undefined);
    out.set(name, {
      name,
      url,
      tags: tagsOf(a.labels[t.tagsLabel]),
      ...(tokenFile ? { tokenFile } : {}),
      ...(t.agents.caFile ? { caFile: t.agents.caFile } : {}),
    });
  }
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
};
