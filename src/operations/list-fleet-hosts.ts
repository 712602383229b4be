/** list_fleet_hosts: the agents the fleet file (and inventory) names, without asking them. */
import { FleetHostList } from '../domain/fleet.ts';
import { readOnlyFleet } from './define.ts';
import { formatFleetHosts } from './fleet-format.ts';
import { nameKey, paged } from './fleet-page.ts';
import { defineFleetRead } from './fleet-read.ts';
import { pageInput } from './inputs.ts';

export const listFleetHosts = defineFleetRead({
  name: 'list_fleet_hosts',
  title: 'List fleet hosts',
  description:
    'Lists the hosts of the fleet as configured (fleet file and/or Ansible inventory), a page at a time in name ' +
    'order: name, URL, tags, whether a token is sent (never the token) and how TLS is checked; with a Prometheus ' +
    'source, the agents of its active targets. Contacts no host. Read scope.',
  fields: pageInput('Hosts', 100, 500),
  output: FleetHostList,
  route: 'hosts',
  // With a Prometheus source it asks Prometheus for the agents.
  annotations: readOnlyFleet,
  format: formatFleetHosts,
  handler: async ({ limit, cursor, ...sel }, ctx) => {
    const p = await paged(
      { limit, cursor },
      sel,
      async () => ({ id: '', value: await ctx.fleet.hosts(sel) }),
      (a) => a.hosts,
      nameKey,
    );
    return { ...p.answer, hosts: p.items, matched: p.matched, nextCursor: p.nextCursor };
  },
});
