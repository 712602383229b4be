/**
 * A mutex with a bounded wait: the plan lock shared by set, compare, holds and restore. A second
 * caller waits up to `waitMs`, then gets `conflict` (409) instead of queueing forever. With a
 * FileLock it also excludes other processes on the host (a CLI `set` while the server compares).
 */
import { PowerPlanError } from '../domain/errors.ts';
import type { FileLock } from './file-lock.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Lock {
  private tail: Promise<void> = Promise.resolve();
  private holder: string | undefined;
  private readonly what: string;
  private readonly file: FileLock | undefined;

  constructor(what: string, file?: FileLock) {
    this.what = what;
    this.file = file;
  }

  /** Takes the file lock, retrying until the deadline while another process holds it. */
  private async acquireFile(owner: string, deadline: number): Promise<() => Promise<void>> {
    if (!this.file) return async () => {};
    for (;;) {
      try {
        return await this.file.acquire(owner);
      } catch (e) {
        // A lock file planted or unsafe (a link, a FIFO) will not go away by waiting.
        if (Date.now() >= deadline || (e as PowerPlanError).details?.unsafePermissions === true) throw e;
        await pause(50);
      }
    }
  }

  /** Resolves once this process holds and awaits the lock no more (or after `maxMs`). */
  async idle(maxMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.tail,
      new Promise<void>((r) => {
        timer = setTimeout(r, maxMs);
      }),
    ]);
    clearTimeout(timer);
  }

  get busy(): boolean {
    return this.holder !== undefined;
  }

  async run<T>(owner: string, fn: () => Promise<T>, waitMs = 2_000): Promise<T> {
    const deadline = Date.now() + waitMs;
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
    let unlockFile: () => Promise<void>;
    try {
      unlockFile = await this.acquireFile(owner, deadline);
    } catch (e) {
      release();
      throw e;
    }
    this.holder = owner;
    try {
      return await fn();
    } finally {
      this.holder = undefined;
      await unlockFile().catch(() => {});
      release();
    }
  }
}
