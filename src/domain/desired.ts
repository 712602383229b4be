/**
 * The shapes of desired state: `desired.json` (a desired plan set through the API, which wins over
 * POWERPLAN_DESIRED_PLAN) and what get_desired_state / set_desired_power_plan answer.
 */
import { z } from 'zod';
import { DesiredSummary } from './schemas.ts';

/** `desired.json`: `planId: null` means "no desired plan", even when one is configured. */
export const DesiredFile = z.object({
  planId: z.string().nullable(),
  planName: z.string().nullable(),
  enforce: z.boolean().optional(),
  setAt: z.string(),
  setBy: z.string(),
});
export type DesiredFile = z.infer<typeof DesiredFile>;

export const DesiredState = z
  .object({
    planId: z
      .string()
      .nullable()
      .describe(
        'The desired plan: its id, or the configured text when it matches no plan; null when none is set.',
      ),
    planName: z.string().nullable(),
    source: z
      .enum(['api', 'config', 'none'])
      .describe(
        'api: set with set_desired_power_plan (wins over the configuration); config: POWERPLAN_DESIRED_PLAN.',
      ),
    enforce: z.boolean().describe('True when the service sets the desired plan back on drift.'),
    intervalSeconds: z
      .number()
      .int()
      .describe('How often the running service checks (POWERPLAN_DESIRED_INTERVAL).'),
    activePlanId: z.string().nullable().describe('The plan in force now.'),
    inDesiredState: z
      .boolean()
      .nullable()
      .describe('True when the desired plan is in force; null when none is set.'),
    status: z
      .union([DesiredSummary.shape.status, z.literal('none')])
      .describe(
        'in-desired-state, drift, held (a hold is in force: drift is not counted or corrected), policy-managed ' +
          '(group policy owns the plan: reported, never corrected), unknown-plan, or none (no desired plan).',
      ),
    checkerRunning: z
      .boolean()
      .describe('True when this process checks periodically (the server); the counters below are its own.'),
    lastCheck: z.string().nullable().describe('ISO 8601 time of the last periodic check.'),
    lastDriftAt: z.string().nullable().describe('ISO 8601 time drift was last detected.'),
    driftTotal: z
      .number()
      .int()
      .describe('Drifts detected since the service started (each drift counted once).'),
    correctedTotal: z.number().int().describe('Drifts corrected by enforcement since the service started.'),
    lastError: z.string().optional().describe('Why the last correction or check failed.'),
  })
  .meta({ id: 'DesiredState', description: 'The desired plan, the plan in force and the drift counters.' });
export type DesiredState = z.infer<typeof DesiredState>;
