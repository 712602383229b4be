/**
 * The agents a Prometheus-sourced fleet changes: Prometheus' active targets that the selector
 * matches, each agent's base URL taken from its scrape URL, its token and CA from the source's
 * `agents` settings.
 */
import { join } from 'node:path';
import { AgentUrl, FLEET_NAME, type FleetHostEntry } from '../../domain/fleet-file.ts';
import { call, instantQuery, type PrometheusAsk } from './prometheus-api.ts';
import { tagsOf } from './promql.ts';

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
export const discoverAgents = async (ask: PrometheusAsk): Promise<FleetHostEntry[]> => {
  const t = ask.target;
  const [targets, up] = await Promise.all([
    call(ask, '/api/v1/targets?state=active') as Promise<{ activeTargets?: unknown }>,
    instantQuery(ask, `up{${t.selector}}`, Date.now() / 1000),
  ]);
  const selected = new Set(up.map((s) => labelKey(s.metric)));
  const active = (Array.isArray(targets?.activeTargets) ? targets.activeTargets : []) as ActiveTarget[];
  const out = new Map<string, FleetHostEntry>();
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
