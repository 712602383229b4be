/**
 * The one timer of a running service's background work (hold expiry, desired-state checks). Each
 * job has a due time and a slack (how much earlier it may run); the timer is set for the earliest
 * due time and, when it fires, runs every job whose due time minus slack has come, so jobs due close
 * together cost one wake-up. Nothing is armed while no job is due, and the timer is unref'd: it
 * never keeps the process alive.
 */

/** The longest delay a Node timer takes (about 24.8 days); later jobs are re-armed on waking. */
const MAX_DELAY_MS = 2 ** 31 - 1;

interface Job {
  at: number;
  slackMs: number;
  run: () => void;
}

export class Schedule {
  private readonly jobs = new Map<string, Job>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor: number | undefined;
  /** When the timer was meant to fire (Date.now() at arming plus its delay). */
  private firesAt = 0;
  private stopped = false;

  /** Runs `run` at `at` (ms since the epoch), or up to `slackMs` earlier to share a wake-up; replaces the job's previous time. */
  set(name: string, at: number, run: () => void, slackMs = 0): void {
    if (this.stopped) return;
    this.jobs.set(name, { at, slackMs: Math.max(0, slackMs), run });
    this.arm();
  }

  clear(name: string): void {
    if (this.jobs.delete(name)) this.arm();
  }

  /** The jobs waiting, earliest first (for status answers and tests). */
  pending(): { name: string; at: number }[] {
    return [...this.jobs].map(([name, j]) => ({ name, at: j.at })).sort((a, b) => a.at - b.at);
  }

  stop(): void {
    this.stopped = true;
    this.jobs.clear();
    this.arm();
  }

  private arm(): void {
    let next: number | undefined;
    for (const j of this.jobs.values()) if (next === undefined || j.at < next) next = j.at;
    if (next === this.armedFor && this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = next;
    if (next === undefined) return;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, next - Date.now()));
    this.firesAt = Date.now() + delay;
    this.timer = setTimeout(() => this.fire(), delay);
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = undefined;
    // A timer counts from the event loop's cached clock, so it may fire a little before Date.now()
    // reaches the time it was armed for: that time has come all the same, or the job it was armed
    // for would wait for one more wake-up while a job with slack ran without it.
    const now = Math.max(Date.now(), this.firesAt);
    const due = [...this.jobs].filter(([, j]) => j.at - j.slackMs <= now);
    for (const [name] of due) this.jobs.delete(name);
    this.arm();
    for (const [, j] of due) j.run();
  }
}
