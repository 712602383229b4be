/** get_fleet_prometheus_targets: the fleet as Prometheus file_sd / http_sd targets. */
import { PrometheusTargets } from '../domain/fleet.ts';
import { readOnly } from './define.ts';
import { defineFleetRead } from './fleet-read.ts';

export const getFleetPrometheusTargets = defineFleetRead({
  name: 'get_fleet_prometheus_targets',
  title: 'Fleet as Prometheus targets',
  description:
    'Prints the fleet as Prometheus service discovery targets (the file_sd and http_sd format): one group per host ' +
    "with its host:port, and labels __scheme__, __metrics_path__ (the agent's /metrics), fleet_host and " +
    'fleet_tags. Contacts no host. The bearer token for scraping is set in the Prometheus job (credentials_file), ' +
    'not here; see docs/FLEET.md. Read scope.',
  output: PrometheusTargets,
  route: 'prometheus-targets',
  annotations: readOnly,
  // For people and for file_sd alike, the CLI prints the bare target list (`> targets.json`).
  format: (t) => JSON.stringify(t.groups, null, 2),
  handler: (input, ctx) => ctx.fleet.prometheusTargets(input),
});
