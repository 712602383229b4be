/** get_fleet_prometheus_targets: the fleet as Prometheus file_sd / http_sd targets. */
import { PrometheusTargets } from '../domain/fleet.ts';
import { readOnly } from './define.ts';
import { paged } from './fleet-page.ts';
import { defineFleetRead } from './fleet-read.ts';
import { pageInput } from './inputs.ts';

export const getFleetPrometheusTargets = defineFleetRead({
  name: 'get_fleet_prometheus_targets',
  title: 'Fleet as Prometheus targets',
  description:
    'Prints the fleet as Prometheus service discovery targets (the file_sd and http_sd format), a page at a time ' +
    "in name order: one group per host with its host:port, and labels __scheme__, __metrics_path__ (the agent's " +
    '/metrics), fleet_host and fleet_tags. Contacts no host. The bearer token for scraping is set in the ' +
    'Prometheus job (credentials_file), not here; see docs/FLEET.md. Read scope.',
  fields: pageInput('Groups', 100, 500),
  output: PrometheusTargets,
  route: 'prometheus-targets',
  annotations: readOnly,
  items: 'groups',
  // For people and for file_sd alike, the CLI prints the bare target list (`> targets.json`), whole.
  allPages: true,
  format: (t) => JSON.stringify(t.groups, null, 2),
  handler: async ({ limit, cursor, ...sel }, ctx) => {
    const p = await paged(
      { limit, cursor },
      sel,
      async () => ({ id: '', value: await ctx.fleet.prometheusTargets(sel) }),
      (a) => a.groups,
      (g) => g.labels.fleet_host ?? '',
    );
    return { groups: p.items, matched: p.matched, nextCursor: p.nextCursor };
  },
});
