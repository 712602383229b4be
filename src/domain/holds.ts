/**
 * The shapes of holds: a hold as the restore journal keeps it, and what the hold operations
 * answer. Durations are parsed here so REST, MCP and the CLI accept the same `for` strings.
 */
import { z } from 'zod';
import { Plan } from './schemas.ts';

/** Bounds of one hold: 1 s (short holds are harmless and keep tests fast) to 7 days. */
export const MIN_HOLD_SECONDS = 1;
export const MAX_HOLD_SECONDS = 7 * 86_400;

const unitSeconds = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
// "2h", "45m", "90s", "1d", "1h30m": each unit at most once, largest first.
const DURATION = /^(?:(\d{1,6})d)?(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,7})s)?$/;

/** Seconds in a duration such as 90s, 45m, 2h, 1d or 1h30m; undefined when it is not one. */
export const parseDuration = (text: string): number | undefined => {
  const m = DURATION.exec(text.trim().toLowerCase());
  if (!m?.slice(1).some((p) => p !== undefined)) return undefined;
  const [d, h, min, s] = m.slice(1).map((p) => Number(p ?? 0)) as [number, number, number, number];
  return d * unitSeconds.d + h * unitSeconds.h + min * unitSeconds.m + s;
};

export const HoldId = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a hold id (a UUID)')
  .describe('The hold id returned by hold_power_plan or listed by list_holds.');

export const HoldRecord = z.object({
  id: HoldId,
  planId: z.string().describe('The held plan.'),
  planName: z.string(),
  reason: z.string().optional().describe('Why the hold was taken, as its caller said.'),
  createdAt: z.string().describe('ISO 8601 time the hold was taken.'),
  expiresAt: z.string().describe('ISO 8601 time the hold ends by itself.'),
  createdBy: z.string().describe('Token name of the caller, or `local`.'),
});
export type HoldRecord = z.infer<typeof HoldRecord>;

/** A hold is live until its expiry time; after that it has ended, whether or not anyone noticed. */
export const isLive = (h: HoldRecord, now: number): boolean => Date.parse(h.expiresAt) > now;

/** The holds of a list split by liveness at `now`: what stays in force and what has ended. */
export const byLiveness = (
  holds: readonly HoldRecord[],
  now: number,
): { alive: HoldRecord[]; expired: HoldRecord[] } => ({
  alive: holds.filter((h) => isLive(h, now)),
  expired: holds.filter((h) => !isLive(h, now)),
});

/**
 * At most this many holds are named in a message or a problem's details, the rest counted: with
 * a hundred holds in force a refusal stays a few hundred bytes, not a list of them all.
 */
export const LISTED_HOLDS = 5;

/** Holds named for a person: id, plan, end and holder of the first few, then how many more. */
export const describeHolds = (holds: readonly HoldRecord[]): string => {
  const named = holds
    .slice(0, LISTED_HOLDS)
    .map((h) => `${h.id} (${h.planName} until ${h.expiresAt}, by ${h.createdBy})`)
    .join(', ');
  return holds.length > LISTED_HOLDS ? `${named} and ${holds.length - LISTED_HOLDS} more` : named;
};

export const Hold = HoldRecord.extend({
  secondsRemaining: z.number().int().describe('Whole seconds until the hold ends by itself.'),
}).meta({ id: 'Hold', description: 'A hold: a plan kept in force until it is released or expires.' });
export type Hold = z.infer<typeof Hold>;

/** A hold as the operations answer it: the record with the whole seconds it has left. */
export const toHold = (h: HoldRecord, now: number): Hold => ({
  ...h,
  secondsRemaining: Math.max(0, Math.ceil((Date.parse(h.expiresAt) - now) / 1000)),
});

/** What a refusal about holds carries in its details: the first few holds, and how many are in force. */
export const holdDetails = (
  holds: readonly HoldRecord[],
  now: number,
): { holds: Hold[]; holdsInForce: number } => ({
  holds: holds.slice(0, LISTED_HOLDS).map((h) => toHold(h, now)),
  holdsInForce: holds.length,
});

export const HoldList = z
  .object({
    holds: z.array(Hold).describe('The holds in force, oldest first.'),
    heldPlanId: z.string().nullable().describe('The plan the holds keep in force; null without holds.'),
    restorePlanId: z
      .string()
      .nullable()
      .describe('The plan restored when the last hold ends (the plan in force before the first hold).'),
    restorePlanName: z.string().nullable(),
    endsAt: z.string().nullable().describe('When the last hold ends by itself, unless released or extended.'),
    restorePending: z
      .boolean()
      .describe('True when every hold has ended but the restore has not succeeded yet (it is retried).'),
    restoreError: z.string().optional().describe('Why the last restore attempt failed.'),
  })
  .meta({ id: 'HoldList' });
export type HoldList = z.infer<typeof HoldList>;

export const HoldResult = z
  .object({
    hold: Hold,
    changed: z.boolean().describe('True when the plan was switched; false when it was already in force.'),
    before: Plan,
    after: Plan,
    restorePlanId: z.string().describe('The plan restored when the last hold ends.'),
    warnings: z.array(z.string()).optional(),
  })
  .meta({ id: 'HoldResult' });
export type HoldResult = z.infer<typeof HoldResult>;

export const ReleaseResult = z
  .object({
    released: Hold,
    remaining: z.array(Hold).describe('Holds still in force; the plan is restored only when none remain.'),
    restored: z.boolean().describe('True when this release ended the last hold and the plan was restored.'),
    restoredPlan: Plan.nullable().describe('The plan in force after the restore; null when none happened.'),
    warnings: z.array(z.string()).optional(),
  })
  .meta({ id: 'ReleaseResult' });
export type ReleaseResult = z.infer<typeof ReleaseResult>;
