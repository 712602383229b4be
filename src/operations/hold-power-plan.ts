/** hold_power_plan: keep a plan in force for a maintenance window, then restore the previous plan. */
import { z } from 'zod';
import { HoldResult, MAX_HOLD_SECONDS, MIN_HOLD_SECONDS, parseDuration } from '../domain/holds.ts';
import { defineOperation } from './define.ts';
import { PlanRef, plainText } from './inputs.ts';

const bounds = `${MIN_HOLD_SECONDS} s to 7 days`;

const Duration = z
  .string()
  .max(32)
  .refine((v) => {
    const s = parseDuration(v);
    return s !== undefined && s >= MIN_HOLD_SECONDS && s <= MAX_HOLD_SECONDS;
  }, `must be a duration like 90s, 45m, 2h, 1d or 1h30m, from ${bounds}`)
  .describe(
    `How long to hold, as a duration: 90s, 45m, 2h, 1d, 1h30m (${bounds}). Give this or \`durationSeconds\`.`,
  );

export const HoldInput = z
  .object({
    plan: PlanRef,
    for: Duration.optional(),
    durationSeconds: z
      .number()
      .int()
      .min(MIN_HOLD_SECONDS)
      .max(MAX_HOLD_SECONDS)
      .optional()
      .describe(
        `How long to hold, in seconds (${MIN_HOLD_SECONDS} to ${MAX_HOLD_SECONDS}). Give this or \`for\`.`,
      ),
    reason: plainText(200)
      .optional()
      .describe('Why the plan is held (shown in list_holds and the audit log), up to 200 characters.'),
  })
  .strict()
  .refine((v) => (v.for === undefined) !== (v.durationSeconds === undefined), {
    message: 'give exactly one of `for` (e.g. 2h) and `durationSeconds`',
    path: ['durationSeconds'],
  });

export const holdPowerPlan = defineOperation({
  name: 'hold_power_plan',
  title: 'Hold a power plan for a while',
  description:
    'Switches to a plan for a maintenance window (a restore, an index rebuild, a batch) and returns a hold id and ' +
    'its expiry. When the last hold ends (release_power_plan, or expiry) the plan that was in force before the ' +
    'first hold is restored, also after a restart or crash of the service. Overlapping holds must name the same ' +
    'plan (a hold for another plan is refused with a conflict); the restore waits for the last one. While holds ' +
    'are in force set_power_plan is refused unless force: true. Audited.',
  input: HoldInput,
  output: HoldResult,
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  scope: 'control',
  http: { method: 'POST', path: '/v1/holds', status: 201 },
  cli: {
    command: ['hold'],
    positional: ['plan'],
    format: (r) =>
      [
        `${r.changed ? 'Switched to' : 'Holding'} ${r.after.name} (${r.after.id}) until ${r.hold.expiresAt}.`,
        `Hold id: ${r.hold.id}  (release early: powerplan release ${r.hold.id})`,
        ...(r.warnings ?? []).map((w) => `Warning: ${w}`),
      ].join('\n'),
  },
  handler: async (input, ctx) =>
    ctx.holds.create(ctx.caller, {
      plan: input.plan,
      seconds: input.durationSeconds ?? parseDuration(input.for ?? '') ?? MIN_HOLD_SECONDS,
      reason: input.reason,
    }),
});
