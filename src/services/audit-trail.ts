/**
 * The writer of the audit trail (`audit.jsonl`): one record per plan change and attempted change,
 * every record the same shape (time, caller, remote, operation, input, before, after, result, error
 * when it failed or was refused). Callers are named by token name, never by token.
 *
 * A refused attempt (invalid input, a missing scope, a conflict, a busy lock, an unknown plan: an
 * error answered 4xx before anything changed) is one `refused` record with the caller, the input
 * as sent (cleaned of control characters and anything shaped like a token, cut to a bounded
 * size) and why. At most
 * `refusalsPerMinute` are written a minute; the rest are counted and summed up in one
 * `suppressed` record when the minute ends, so a flood of refusals cannot fill the disk. Refusals
 * and their summaries go to `audit-refused.jsonl`, a log of their own rotated the same way, so
 * that they can never rotate a change record out of `audit.jsonl`; get_audit_log reads both.
 */
import type { AuditOperation } from '../domain/audit.ts';
import { normalizeError } from '../domain/errors.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';
import type { AuditEntry, Who } from './change-intent.ts';

const WINDOW_MS = 60_000;
const MAX_TEXT = 200;
const MAX_ERROR = 500;
const MAX_KEYS = 20;
const MAX_ITEMS = 10;
const MAX_DEPTH = 3;
const MAX_INPUT_JSON = 2_048;

// Control and format characters (terminal escapes, bidi overrides, NUL) never reach the trail.
const UNPRINTABLE = /[\p{Cc}\p{Cf}]/gu;
// Nor does a token pasted into a field (or part of one): the prefix and base64url characters.
const TOKEN_LIKE = /pp_[A-Za-z0-9_-]{8,}/g;

const cut = (s: string, max: number): string => {
  const clean = s.replace(UNPRINTABLE, '?').replace(TOKEN_LIKE, 'pp_(a token, not recorded)');
  return clean.length > max ? `${clean.slice(0, max)}… (${clean.length - max} more characters)` : clean;
};

/** A caller's input as the trail keeps it: printable, at most a few levels, keys and items deep. */
const bounded = (v: unknown, depth = 0): unknown => {
  if (typeof v === 'string') return cut(v, MAX_TEXT);
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v !== 'object') return v === undefined ? undefined : typeof v;
  if (depth >= MAX_DEPTH) return Array.isArray(v) ? `[${v.length} items]` : '{…}';
  if (Array.isArray(v)) {
    const items = v.slice(0, MAX_ITEMS).map((x) => bounded(x, depth + 1));
    return v.length > MAX_ITEMS ? [...items, `… ${v.length - MAX_ITEMS} more`] : items;
  }
  const entries = Object.entries(v);
  const out: Record<string, unknown> = {};
  for (const [k, x] of entries.slice(0, MAX_KEYS)) out[cut(k, 50)] = bounded(x, depth + 1);
  if (entries.length > MAX_KEYS) out['…'] = `${entries.length - MAX_KEYS} more fields`;
  return out;
};

/** The input of a refused attempt, bounded in shape and in size. */
export const refusedInput = (input: unknown): Record<string, unknown> => {
  const b = bounded(input ?? {});
  const record =
    b !== null && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : { value: b };
  const json = JSON.stringify(record);
  return json.length <= MAX_INPUT_JSON ? record : { cut: cut(json, MAX_INPUT_JSON / 2) };
};

export interface RefusalCounts {
  /** Refused attempts seen by this process, written or not. */
  refused: number;
  /** Of those, the ones left out of the trail (summed up in `suppressed` records). */
  suppressed: number;
}

export class AuditTrail {
  private readonly store: Store;
  private readonly log: Logger;
  private readonly perWindow: number;
  private readonly windowMs: number;
  /** Errors recorded already (a failed switch, a refusal seen at an inner step). */
  private readonly recorded = new WeakSet<object>();
  private windowStart = 0;
  private writtenInWindow = 0;
  private left: { count: number; since: string; operations: Record<string, number> } | undefined;
  private timer: NodeJS.Timeout | undefined;
  readonly counts: RefusalCounts = { refused: 0, suppressed: 0 };

  constructor(o: { store: Store; log: Logger; refusalsPerMinute: number; windowMs?: number }) {
    this.store = o.store;
    this.log = o.log;
    this.perWindow = o.refusalsPerMinute;
    this.windowMs = o.windowMs ?? WINDOW_MS;
  }

  /** Writes one record: a change (or failed change) to `audit.jsonl`, a refusal to its own log. */
  async write(who: Who, entry: AuditEntry): Promise<void> {
    const refusal = entry.result === 'refused' || entry.result === 'suppressed';
    await this.store.append(refusal ? 'audit-refused.jsonl' : 'audit.jsonl', {
      time: new Date().toISOString(),
      caller: who === 'service' ? 'service' : who.name,
      ...(who !== 'service' && who.remote ? { remote: who.remote } : {}),
      operation: entry.operation,
      input: entry.input,
      before: entry.before,
      after: entry.after,
      result: entry.result,
      ...(entry.error !== undefined ? { error: entry.error } : {}),
      ...(entry.code !== undefined ? { code: entry.code } : {}),
      ...(entry.mismatches?.length ? { mismatches: entry.mismatches } : {}),
    });
  }

  /** Marks an error as recorded already (the failed switch it caused has its record). */
  recordedAlready(e: unknown): void {
    if (typeof e === 'object' && e !== null) this.recorded.add(e);
  }

  /**
   * Records `e` as a refused attempt of `operation` when it is one (answered 4xx, not recorded
   * yet), within the rate cap. Never throws: a trail that cannot be written is logged, and the
   * caller's answer stays the refusal.
   */
  async refused(who: Who, operation: AuditOperation, input: unknown, e: unknown): Promise<void> {
    if (typeof e !== 'object' || e === null || this.recorded.has(e)) return;
    const err = normalizeError(e);
    if (err.status < 400 || err.status >= 499) return;
    this.recorded.add(e);
    this.counts.refused++;
    const now = Date.now();
    if (now - this.windowStart >= this.windowMs) {
      const summary = this.flush(); // takes what the last minute left out before the new one starts
      this.windowStart = now;
      this.writtenInWindow = 0;
      await summary;
    }
    if (this.writtenInWindow >= this.perWindow) {
      this.counts.suppressed++;
      this.left ??= { count: 0, since: new Date(now).toISOString(), operations: {} };
      this.left.count++;
      this.left.operations[operation] = (this.left.operations[operation] ?? 0) + 1;
      // One timer, only while something waits to be summed up; it keeps no process alive.
      this.timer ??= setTimeout(() => void this.flush(), this.windowStart + this.windowMs - now).unref();
      return;
    }
    this.writtenInWindow++;
    await this.safely(who, {
      operation,
      input: refusedInput(input),
      before: null,
      after: null,
      result: 'refused',
      code: err.code,
      error: cut(err.message, MAX_ERROR),
    });
  }

  /** Writes the summary of the refusals left out, if any (at the end of their minute, and at stop). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const left = this.left;
    if (!left) return;
    this.left = undefined;
    await this.safely('service', {
      operation: 'refusals_suppressed',
      input: { ...left, until: new Date().toISOString(), perMinute: this.perWindow },
      before: null,
      after: null,
      result: 'suppressed',
      error: `${left.count} more refusals suppressed (at most ${this.perWindow} a minute are recorded one by one).`,
    });
  }

  private async safely(who: Who, entry: AuditEntry): Promise<void> {
    try {
      await this.write(who, entry);
    } catch (e) {
      this.log.error('writing a refusal to the audit trail failed', { error: String(e) });
    }
  }
}
