/** release_power_plan: end a hold early; the last one to end restores the plan from before the holds. */
import { z } from 'zod';
import { HoldId, ReleaseResult } from '../domain/holds.ts';
import { defineOperation } from './define.ts';

export const releasePowerPlan = defineOperation({
  name: 'release_power_plan',
  title: 'Release a hold',
  description:
    'Ends a hold before it expires. When it was the last hold in force, the plan that was in force before the ' +
    'first hold is restored; otherwise the plan stays until the remaining holds end. A hold that has already ' +
    'expired or been released is not found (404). Audited.',
  input: z.object({ id: HoldId }).strict(),
  output: ReleaseResult,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  scope: 'control',
  http: { method: 'DELETE', path: '/v1/holds/{id}' },
  cli: {
    command: ['release'],
    positional: ['id'],
    format: (r) =>
      [
        `Released hold ${r.released.id}.`,
        r.restored && r.restoredPlan
          ? `Restored ${r.restoredPlan.name} (${r.restoredPlan.id}).`
          : r.remaining.length
            ? `${r.remaining.length} more ${r.remaining.length === 1 ? 'hold keeps' : 'holds keep'} ${r.released.planName}; the plan is restored when the last ends.`
            : 'Nothing was restored.',
        ...(r.warnings ?? []).map((w) => `Warning: ${w}`),
      ].join('\n'),
  },
  handler: async (input, ctx) => ctx.holds.release(ctx.caller, input.id),
});
