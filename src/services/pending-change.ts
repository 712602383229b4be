/**
 * The change in flight, `plan-change.json`: written by the plan-change service before it switches
 * the plan and removed once the change's audit record is written. A process killed in between
 * leaves it behind; whoever takes the plan lock next (the next start, or the next change) finds it
 * and settles it: when the plan in force is the one the change switched to, the record of that
 * switch is written (with the records that were to follow it); when it is not, a `failed` record
 * says the switch did not happen. A record the dead process wrote before it died is found in the
 * audit trail and not written twice, so every change leaves exactly one record.
 */
import { z } from 'zod';
import { AuditOperation, AuditRecord, AuditResult } from '../domain/audit.ts';
import { Mismatch } from '../domain/idle.ts';
import type { JsonlLog } from '../lib/jsonl-log.ts';

const Named = z.object({ id: z.string(), name: z.string() });

/** One audit record as the plan-change service writes it (before the caller and time are added). */
export const AuditEntry = z.object({
  operation: AuditOperation,
  input: z.record(z.string(), z.unknown()),
  before: Named.nullable(),
  after: Named.nullable(),
  result: AuditResult,
  error: z.string().optional(),
  /** The error code of a refusal. */
  code: z.string().optional(),
  /** Settings the read-back found not in force. */
  mismatches: z.array(Mismatch).optional(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const PendingChange = z.object({
  version: z.literal(1),
  startedAt: z.string(),
  caller: z.string(),
  remote: z.string().optional(),
  /** The record of the switch, written when it is found to have happened. */
  entry: AuditEntry,
  /** Records that follow the switch's own (holds that a forced set ends). */
  followUps: z.array(AuditEntry),
  /** The restore journal is removed once the switch has happened (a forced set ends the holds). */
  clearJournal: z.boolean(),
  /** The desired plan whose enforcement a forced set turns off once the switch has happened. */
  endEnforcement: z.object({ planId: z.string(), planName: z.string() }).optional(),
});
export type PendingChange = z.infer<typeof PendingChange>;

export const PENDING = 'plan-change.json' as const;

/** Records that are no switch's own: a drift seen, a refused attempt, a summary of refusals. */
const notSwitches = new Set<AuditResult>(['detected', 'refused', 'suppressed']);

/**
 * True when the audit trail holds the record of `pending` already: written by its caller at or
 * after the change started, for the same operation and target. Only the plan-lock holder writes
 * such records, so one found there was written by the process that died.
 */
export const alreadyAudited = async (audit: JsonlLog, pending: PendingChange): Promise<boolean> => {
  const since = Date.parse(pending.startedAt);
  for await (const line of audit.newestFirst()) {
    const r = AuditRecord.safeParse(line);
    if (!r.success) continue;
    if (Date.parse(r.data.time) < since) return false;
    if (
      r.data.caller === pending.caller &&
      r.data.operation === pending.entry.operation &&
      r.data.after?.id === pending.entry.after?.id &&
      !notSwitches.has(r.data.result)
    )
      return true;
  }
  return false;
};
