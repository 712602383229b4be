/**
 * The writer of the audit trail (`audit.jsonl`): one record per plan change and attempted change,
 * every record the same shape (time, caller, remote, operation, input, before, after, result, error
 * when it failed). Callers are named by token name, never by token.
 */
import type { Store } from '../lib/store.ts';
import type { AuditEntry, Who } from './change-intent.ts';

export class AuditTrail {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  /** Writes one record. */
  async write(who: Who, entry: AuditEntry): Promise<void> {
    await this.store.append('audit.jsonl', {
      time: new Date().toISOString(),
      caller: who === 'service' ? 'service' : who.name,
      ...(who !== 'service' && who.remote ? { remote: who.remote } : {}),
      operation: entry.operation,
      input: entry.input,
      before: entry.before,
      after: entry.after,
      result: entry.result,
      ...(entry.error !== undefined ? { error: entry.error } : {}),
      ...(entry.mismatches?.length ? { mismatches: entry.mismatches } : {}),
    });
  }
}
