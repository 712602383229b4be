/** list_holds: the holds in force, the plan they keep and the plan restored when they end. */
import { z } from 'zod';
import { HoldList } from '../services/holds-schemas.ts';
import { defineOperation } from './define.ts';

export const listHolds = defineOperation({
  name: 'list_holds',
  title: 'List holds',
  description:
    'Lists the holds in force (id, plan, reason, who took it, expiry, seconds remaining), the plan they keep in ' +
    'force and the plan restored when the last one ends. Holds that have expired are ended (and the plan ' +
    'restored) before answering. Read scope.',
  input: z.object({}).strict(),
  output: HoldList,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  scope: 'read',
  http: { method: 'GET', path: '/v1/holds' },
  cli: {
    command: ['holds'],
    format: (l) =>
      l.holds.length
        ? [
            ...l.holds.map(
              (h) =>
                `${h.id}  ${h.planName}  until ${h.expiresAt} (${h.secondsRemaining} s)  by ${h.createdBy}${h.reason ? `: ${h.reason}` : ''}`,
            ),
            `Restores ${l.restorePlanName} (${l.restorePlanId}) when the last hold ends${l.endsAt ? `, at ${l.endsAt} at the latest` : ''}.`,
          ].join('\n')
        : l.restorePending
          ? `No holds; restoring ${l.restorePlanName} (${l.restorePlanId}) is pending${l.restoreError ? `: ${l.restoreError}` : ''}.`
          : 'No holds.',
  },
  handler: async (_input, ctx) => ctx.holds.list(),
});
