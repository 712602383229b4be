/** list_fleet_hosts: the agents the fleet file (and inventory) names, without asking them. */
import { z } from 'zod';
import { FleetHostList } from '../domain/fleet.ts';
import { defineOperation, readOnlyFleet } from './define.ts';
import { formatFleetHosts } from './fleet-format.ts';
import { fleetSelection } from './inputs.ts';

export const listFleetHosts = defineOperation({
  name: 'list_fleet_hosts',
  title: 'List fleet hosts',
  description:
    'Lists the hosts of the fleet as configured (fleet file and/or Ansible inventory): name, URL, tags, whether a ' +
    'token is sent (never the token) and how TLS is checked; with a Prometheus source, the agents of its active ' +
    'targets. Contacts no host. Read scope.',
  input: z.object(fleetSelection).strict(),
  output: FleetHostList,
  annotations: readOnlyFleet,
  scope: 'read',
  http: { method: 'GET', path: '/v1/fleet/hosts' },
  cli: { command: ['fleet', 'hosts'], format: formatFleetHosts },
  handler: (input, ctx) => ctx.fleet.hosts(input),
});
