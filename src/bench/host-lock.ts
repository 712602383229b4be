/**
 * One benchmark at a time per host, across processes: a lock file in the state directory created
 * with O_EXCL, holding the owner's pid. A lock left by a process that is gone (or older than any
 * run can last) is stale and taken over, so a crash never blocks benchmarks for good.
 */
import { open, readFile, rm, stat } from 'node:fs/promises';
import { PowerPlanError } from '../domain/errors.ts';

interface LockContent {
  pid: number;
  startedAt: string;
  what: string;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export class HostLock {
  private readonly path: string;
  private readonly staleMs: number;

  constructor(path: string, staleMs = 15 * 60_000) {
    this.path = path;
    this.staleMs = staleMs;
  }

  private async holder(): Promise<LockContent | undefined> {
    try {
      const c = JSON.parse(await readFile(this.path, 'utf8')) as Partial<LockContent>;
      if (typeof c.pid !== 'number' || typeof c.startedAt !== 'string') return undefined;
      return { pid: c.pid, startedAt: c.startedAt, what: String(c.what ?? 'a benchmark') };
    } catch {
      return undefined;
    }
  }

  /** Takes the lock or throws `busy`; returns the function that releases it. */
  async acquire(what: string): Promise<() => Promise<void>> {
    const content: LockContent = { pid: process.pid, startedAt: new Date().toISOString(), what };
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const handle = await open(this.path, 'wx', 0o600);
        try {
          await handle.writeFile(JSON.stringify(content));
        } finally {
          await handle.close();
        }
        return async () => {
          const now = await this.holder();
          if (now?.pid === content.pid && now.startedAt === content.startedAt)
            await rm(this.path, { force: true });
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const h = await this.holder();
      if (!h) {
        // Unreadable: either torn by a crash (stale) or being written right now (give it a moment).
        const age = await stat(this.path).then(
          (s) => Date.now() - s.mtimeMs,
          () => Number.POSITIVE_INFINITY,
        );
        if (age < 5_000)
          throw new PowerPlanError('busy', 'A benchmark is starting on this host; try again shortly.');
      }
      const stale = !h || !alive(h.pid) || !(Date.now() - Date.parse(h.startedAt) <= this.staleMs);
      if (h && !stale) {
        throw new PowerPlanError(
          'busy',
          `A benchmark is already running on this host (${h.what}, process ${h.pid}, started ${h.startedAt}); try again when it has finished.`,
          { pid: h.pid, startedAt: h.startedAt },
        );
      }
      await rm(this.path, { force: true });
    }
    throw new PowerPlanError('busy', 'Another process keeps taking the benchmark lock; try again shortly.');
  }
}
