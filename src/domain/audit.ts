/**
 * The audit trail: one JSON line per change or attempted change of the power plan (and of the
 * desired plan), appended to `audit.jsonl` in the state directory, rotated by size. Every record
 * has the same shape (time, caller, operation, input, before, after, result, error when failed);
 * the plan-change service is the one writer. Records callers by token name, never by token.
 */
import { z } from 'zod';
import { Mismatch } from './idle.ts';

/** Everything that is audited: the operations that change a plan and the service's own actions. */
export const AuditOperation = z
  .enum([
    'set_power_plan',
    'hold_power_plan',
    'release_power_plan',
    'hold_expire',
    'hold_restore',
    'hold_recover',
    'set_desired_power_plan',
    'desired_state_check',
    'enforce_desired_state',
    'compare_power_plans',
    'compare_restore',
    'refusals_suppressed',
  ])
  .describe('Operation or internal action, e.g. set_power_plan, compare_restore.');
export type AuditOperation = z.infer<typeof AuditOperation>;

export const AuditResult = z
  .enum(['changed', 'failed', 'restored', 'created', 'detected', 'refused', 'suppressed'])
  .describe(
    'What happened: `refused` is an attempt refused before anything changed (invalid input, scope, conflict, lock busy, unknown plan); `suppressed` sums up the refusals left out once more than the configured number a minute came in.',
  );
export type AuditResult = z.infer<typeof AuditResult>;

/** A plan as the audit trail names it (records of earlier versions may carry more fields). */
export const AuditPlan = z.looseObject({ id: z.string(), name: z.string().optional() }).nullable();
export type AuditPlan = { id: string; name: string } | null;

export const AuditRecord = z
  .object({
    time: z.string().describe('ISO 8601 time of the event.'),
    caller: z
      .string()
      .describe(
        'Token name, `local`, or `service` for the service acting on its own (restore, expiry, enforcement).',
      ),
    remote: z.string().optional().describe('Remote address of the HTTP caller.'),
    operation: AuditOperation,
    input: z.unknown().optional().describe('What the caller asked for (always present since this version).'),
    before: AuditPlan.optional().describe('The plan in force before; null when not read or not relevant.'),
    after: AuditPlan.optional().describe(
      'The plan in force after (or asked for, when failed); null when none.',
    ),
    result: AuditResult,
    error: z
      .string()
      .optional()
      .describe('Why it failed or was refused; for `suppressed`, how many refusals were left out.'),
    code: z
      .string()
      .optional()
      .describe('The error code of a refusal (invalid_input, forbidden, not_found, conflict, ...).'),
    mismatches: z
      .array(Mismatch)
      .optional()
      .describe(
        'Settings read back after the switch that are not as the plan asks (the change did not fully take effect).',
      ),
  })
  .meta({ id: 'AuditRecord' });
export type AuditRecord = z.infer<typeof AuditRecord>;

/** What get_audit_log answers. */
export const AuditLog = z
  .object({
    records: z.array(AuditRecord).describe('Audit records in the order they were written, oldest first.'),
    truncated: z
      .boolean()
      .describe('True when more records matched than `limit`; the oldest of them were left out.'),
  })
  .meta({ id: 'AuditLog' });
export type AuditLog = z.infer<typeof AuditLog>;
