/**
 * Requested versus effective after a switch: the settings a plan should have put in force, read
 * back from the system and kept (`effective.json`) so the active plan, the page and the fleet can
 * show the last answer. A read that fails is "not checked": it never fails the switch.
 */
import { z } from 'zod';
import { errorMessage } from '../domain/errors.ts';
import { Effective, notChecked } from '../domain/idle.ts';
import type { Logger } from '../lib/log.ts';
import type { Store } from '../lib/store.ts';
import type { PowerBackend } from '../platform/backend.ts';

/** The read-back of the last switch. */
const LastEffective = z.object({ planId: z.string(), checkedAt: z.string(), effective: Effective });
const EFFECTIVE = 'effective.json';

export class ReadBack {
  private readonly store: Store;
  private readonly backend: PowerBackend;
  private readonly log: Logger;

  constructor(o: { store: Store; backend: PowerBackend; log: Logger }) {
    this.store = o.store;
    this.backend = o.backend;
    this.log = o.log;
  }

  /** Reads back the settings `planId` should have put in force and keeps the answer (never throws). */
  async read(planId: string): Promise<Effective> {
    let effective: Effective;
    try {
      effective = (await this.backend.checkEffective?.(planId)) ?? notChecked();
    } catch (e) {
      this.log.warn('reading back the settings failed', { planId, error: errorMessage(e) });
      effective = notChecked();
    }
    await this.store
      .write(EFFECTIVE, { planId, checkedAt: new Date().toISOString(), effective })
      .catch((e) => this.log.warn('keeping the read-back failed', { error: errorMessage(e) }));
    if (!effective.matches) {
      this.log.warn('the plan did not fully take effect', {
        planId,
        mismatches: effective.mismatches.map((m) => m.setting),
      });
    }
    return effective;
  }

  /** The last read-back, when it was about `planId` (the plan in force). */
  async last(planId: string): Promise<Effective | undefined> {
    const last = await this.store.readShared(EFFECTIVE, LastEffective).catch(() => undefined);
    return last?.planId === planId ? last.effective : undefined;
  }
}
