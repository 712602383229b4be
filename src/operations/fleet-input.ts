/** The host selection shared by the fleet operations: names and tags. */
import { z } from 'zod';
import { FleetHostName, FleetTag } from '../domain/fleet.ts';

export const fleetSelection = {
  hosts: z
    .array(FleetHostName)
    .max(10_000)
    .optional()
    .describe(
      'Only these hosts, by their fleet names (CLI: --hosts db1,db2). Every name must be in the fleet.',
    ),
  tags: z
    .array(FleetTag)
    .max(64)
    .optional()
    .describe('Only hosts with any of these tags (CLI: --tags sql). With hosts, a host must match both.'),
};
