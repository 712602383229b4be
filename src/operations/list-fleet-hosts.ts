/** list_fleet_hosts: the agents the fleet file (and inventory) names, without asking them. */
import { FleetHostList } from '../domain/fleet.ts';
import { readOnlyFleet } from './define.ts';
import { formatFleetHosts } from './fleet-format.ts';
import { defineFleetRead } from './fleet-read.ts';

export const listFleetHosts = defineFleetRead({
  name: 'list_fleet_hosts',
  title: 'List fleet hosts',
  description:
    'Lists the hosts of the fleet as configured (fleet file and/or Ansible inventory): name, URL, tags, whether a ' +
    'token is sent (never the token) and how TLS is checked; with a Prometheus source, the agents of its active ' +
    'targets. Contacts no host. Read scope.',
  output: FleetHostList,
  route: 'hosts',
  // With a Prometheus source it asks Prometheus for the agents.
  annotations: readOnlyFleet,
  format: formatFleetHosts,
  handler: (input, ctx) => ctx.fleet.hosts(input),
});
