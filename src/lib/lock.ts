/**
 * An in-process mutex with a bounded wait: the plan lock shared by set, compare, holds and restore.
 * A second caller waits up to `waitMs`, then gets `conflict` (409) instead of queueing forever.
 */
import { PowerPlanError } from '../domain/errors.ts';

export class Lock {
  private tail: Promise<void> = Promise.resolve();
  private holder: string | undefined;
  private readonly what: string;

  constructor(what: string) {
    this.what = what;
  }

  get busy(): boolean {
    return this.holder !== undefined;
  }

  async run<T>(owner: string, fn: () => Promise<T>, waitMs = 2_000): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    this.tail = previous.then(() => mine);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => {
      timer = setTimeout(() => r('timeout'), waitMs);
    });
    const won = await Promise.race([previous.then(() => 'acquired' as const), timedOut]);
    clearTimeout(timer);
    if (won === 'timeout') {
      // Give our slot back once the queue reaches it, so later callers are not blocked by us.
      previous.then(release, release);
      throw new PowerPlanError(
        'conflict',
        `${this.what} is in use by ${this.holder ?? 'another request'}; try again when it has finished.`,
      );
    }
    this.holder = owner;
    try {
      return await fn();
    } finally {
      this.holder = undefined;
      release();
    }
  }
}
