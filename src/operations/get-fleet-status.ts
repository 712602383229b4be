/** get_fleet_status: the power plan status of every agent of the fleet, in one call. */
import { z } from 'zod';
import { FleetStatus } from '../domain/fleet.ts';
import { defineOperation, readOnlyFleet } from './define.ts';
import { formatFleetStatus } from './fleet-format.ts';
import { fleetSelection } from './inputs.ts';

export const getFleetStatus = defineOperation({
  name: 'get_fleet_status',
  title: 'Fleet status',
  description:
    'Asks every powerplan agent of the fleet (the servers named in the fleet file) for its power plan status in one ' +
    'call: per host the plan in force (id, name, kind), owner, whether it can be changed, group policy, holds, ' +
    'desired-state drift, the latest benchmark burst penalty and the recommendation (summary, whether to switch, to ' +
    'which kind), or why the host did not answer (unreachable, unauthorized, error). Counts in `summary`. Filter ' +
    'with hosts and tags. Read-only on every host; runs no benchmark. Answers within the per-host timeout (5 s by ' +
    'default) even when hosts are down; answers are cached for 3 s. When the fleet file names a Prometheus server ' +
    "instead of hosts, the same answer comes from Prometheus' latest scrapes (a few queries for the whole fleet; " +
    '`source` says so): a host whose scrape failed or that is no longer scraped is unreachable, with the time of its ' +
    'last sample in lastSampleAt.',
  input: z.object(fleetSelection).strict(),
  output: FleetStatus,
  annotations: readOnlyFleet,
  scope: 'read',
  http: { method: 'GET', path: '/v1/fleet/status' },
  cli: { command: ['fleet', 'status'], format: formatFleetStatus },
  handler: (input, ctx) => ctx.fleet.status(input),
});
