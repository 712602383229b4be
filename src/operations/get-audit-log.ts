/** get_audit_log: reads back the audit trail of plan changes, newest last, across rotated files. */
import { z } from 'zod';
import { AuditRecord } from '../lib/audit.ts';
import { defineOperation } from './define.ts';

export const AuditLog = z
  .object({
    records: z.array(AuditRecord).describe('Audit records in the order they were written, oldest first.'),
    truncated: z
      .boolean()
      .describe('True when more records matched than `limit`; the oldest of them were left out.'),
  })
  .meta({ id: 'AuditLog' });

const describeRecord = (r: AuditRecord): string => {
  const name = (v: unknown) =>
    v && typeof v === 'object' && 'name' in v ? String((v as { name: unknown }).name) : undefined;
  const from = name(r.before);
  const to = name(r.after);
  const change = from && to ? ` ${from} -> ${to}` : to ? ` ${to}` : '';
  const who = r.remote ? `${r.caller}@${r.remote}` : r.caller;
  return `${r.time}  ${who}  ${r.operation}  ${r.result}${change}${r.error ? `  (${r.error})` : ''}`;
};

export const getAuditLog = defineOperation({
  name: 'get_audit_log',
  title: 'Audit log',
  description:
    'Returns the audit trail: one record per change or attempted change of the power plan (set, create, ' +
    'comparison and restore), with time, caller (token name, `local` or `service`), remote address, operation, ' +
    'input, the plan before and after, and the result. Tokens are never recorded. Newest last; use `since` to ' +
    'read only recent records and `limit` to cap the answer. Read-only; needs the control scope because it ' +
    'shows who changed what from where.',
  input: z
    .object({
      limit: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .default(100)
        .describe('At most this many records, the most recent ones (1 to 1000, default 100).'),
      since: z.iso
        .datetime({ offset: true })
        .optional()
        .describe('Only records at or after this ISO 8601 time, e.g. 2025-01-31T00:00:00Z.'),
    })
    .strict(),
  output: AuditLog,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  scope: 'control',
  http: { method: 'GET', path: '/v1/audit' },
  cli: {
    command: ['audit'],
    format: (log) =>
      log.records.length
        ? [
            ...(log.truncated ? ['(older records left out; raise --limit or use --since)'] : []),
            ...log.records.map(describeRecord),
          ].join('\n')
        : 'No audit records.',
  },
  handler: async (input, ctx) => {
    const since = input.since ? Date.parse(input.since) : Number.NEGATIVE_INFINITY;
    // From the newest record backwards across the rotated files: only what the answer needs is read.
    const newest: AuditRecord[] = [];
    let truncated = false;
    for await (const line of ctx.store.audit.newestFirst()) {
      // A line that does not fit the schema (hand-edited, or from a future version) is skipped.
      const parsed = AuditRecord.safeParse(line);
      if (!parsed.success) continue;
      if (Date.parse(parsed.data.time) < since) break;
      if (newest.length === input.limit) {
        truncated = true;
        break;
      }
      newest.push(parsed.data);
    }
    return { records: newest.reverse(), truncated };
  },
});
