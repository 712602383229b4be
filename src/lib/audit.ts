/**
 * The audit trail: one JSON line per change or attempted change of the power plan, appended to
 * `audit.jsonl` in the state directory. Records callers by token name, never by token.
 */
import { z } from 'zod';
import type { Caller } from '../domain/scopes.ts';
import type { Store } from './store.ts';

export const AuditRecord = z
  .object({
    time: z.string().describe('ISO 8601 time of the event.'),
    caller: z
      .string()
      .describe(
        'Token name, `local`, or `service` for the service acting on its own (restore, expiry, enforcement).',
      ),
    remote: z.string().optional().describe('Remote address of the HTTP caller.'),
    operation: z.string().describe('Operation or internal action, e.g. set_power_plan, compare_restore.'),
    input: z.unknown().optional(),
    before: z.unknown().optional(),
    after: z.unknown().optional(),
    result: z.enum(['changed', 'failed', 'restored', 'created', 'detected']).describe('What happened.'),
    error: z.string().optional(),
  })
  .meta({ id: 'AuditRecord' });
export type AuditRecord = z.infer<typeof AuditRecord>;

export const audit = (
  store: Store,
  caller: Caller | 'service',
  record: Omit<AuditRecord, 'time' | 'caller' | 'remote'>,
): Promise<void> =>
  store.append('audit.jsonl', {
    time: new Date().toISOString(),
    caller: caller === 'service' ? 'service' : caller.name,
    ...(caller !== 'service' && caller.remote ? { remote: caller.remote } : {}),
    ...record,
  });
