/** get_audit_log: reads back the audit trail of plan changes, newest last, across rotated files. */
import { z } from 'zod';
import { AuditLog, type AuditRecord } from '../domain/audit.ts';
import { readAuditLog } from '../lib/audit-log.ts';
import { defineOperation, readOnly } from './define.ts';
import { limitInput, sinceInput } from './inputs.ts';

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
      limit: limitInput(
        1000,
        100,
        'At most this many records, the most recent ones (1 to 1000, default 100).',
      ),
      since: sinceInput(
        'Only records at or after this time: an ISO 8601 time (2025-01-31T00:00:00Z) or a duration ago (1h, 30m, 2d).',
      ).optional(),
    })
    .strict(),
  output: AuditLog,
  annotations: readOnly,
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
  handler: async (input, ctx) => readAuditLog([ctx.store.audit, ctx.store.refusals], input),
});
