/**
 * cyclictest (Debian's rt-tests), the reference for timer wake-up latency: how late a thread
 * sleeping on a timer runs again. Run with a histogram (`-h`) so the median and the 99th
 * percentile can be read, not only min/avg/max; `--laptop` keeps it from holding
 * /dev/cpu_dma_latency at 0 itself (its default), so the condition is the one the caller set.
 */
import { runCommand } from '../../src/lib/run-command.ts';

export const CYCLICTEST = '/usr/bin/cyclictest';

export interface CyclictestResult {
  /** Non-empty histogram buckets: [latency us, count]; overflows counted at the maximum. */
  buckets: [number, number][];
  samples: number;
  p50: number;
  p99: number;
  max: number;
  min: number;
  avg: number;
  overflows: number;
}

/** Reads `cyclictest -q -h N` output for thread 0: the histogram buckets (us) and the summary lines. */
export const parseCyclictest = (text: string): CyclictestResult => {
  const buckets: [number, number][] = [];
  for (const m of text.matchAll(/^(\d{6}) +(\d+)/gm)) {
    const count = Number(m[2]);
    if (count > 0) buckets.push([Number(m[1]), count]);
  }
  const summary = (name: string) => {
    const m = new RegExp(`^# ${name}: *(\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) : Number.NaN;
  };
  const overflows = summary('Histogram Overflows');
  const max = summary('Max Latencies');
  const total = buckets.reduce((s, [, c]) => s + c, 0) + (Number.isNaN(overflows) ? 0 : overflows);
  const at = (q: number): number => {
    const want = Math.ceil(total * q);
    let seen = 0;
    for (const [us, c] of buckets) {
      seen += c;
      if (seen >= want) return us;
    }
    return max; // in the overflow: at least the histogram's end, at most the maximum
  };
  if (!Number.isNaN(overflows) && overflows > 0) buckets.push([max, overflows]);
  return {
    buckets,
    samples: total,
    p50: at(0.5),
    p99: at(0.99),
    max,
    min: summary('Min Latencies'),
    avg: summary('Avg Latencies'),
    overflows: Number.isNaN(overflows) ? 0 : overflows,
  };
};

/** Several runs as one: the histograms added up. */
export const mergeCyclictest = (runs: CyclictestResult[]): CyclictestResult => {
  const counts = new Map<number, number>();
  for (const r of runs) for (const [us, c] of r.buckets) counts.set(us, (counts.get(us) ?? 0) + c);
  const buckets = [...counts].sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((s, [, c]) => s + c, 0);
  const at = (q: number) => {
    const want = Math.ceil(total * q);
    let seen = 0;
    for (const [us, c] of buckets) {
      seen += c;
      if (seen >= want) return us;
    }
    return buckets.at(-1)?.[0] ?? 0;
  };
  return {
    buckets,
    samples: total,
    p50: at(0.5),
    p99: at(0.99),
    max: Math.max(...runs.map((r) => r.max)),
    min: Math.min(...runs.map((r) => r.min)),
    avg: runs.reduce((s, r) => s + r.avg * r.samples, 0) / Math.max(1, total),
    overflows: runs.reduce((s, r) => s + r.overflows, 0),
  };
};

/** One measuring thread at SCHED_OTHER (like the product's probe), `loops` wake-ups every `intervalUs`. */
export const runCyclictest = async (o: {
  intervalUs: number;
  loops: number;
  cpu?: number;
  histogramUs?: number;
}): Promise<CyclictestResult> => {
  const args = [
    '--laptop',
    '-m',
    '-t1',
    `-i${o.intervalUs}`,
    `-l${o.loops}`,
    '-q',
    `-h${o.histogramUs ?? 20_000}`,
    ...(o.cpu !== undefined ? [`-a${o.cpu}`] : []),
  ];
  const r = await runCommand(CYCLICTEST, args, { timeoutMs: 60_000 + (o.intervalUs * o.loops) / 1000 });
  if (r.exitCode !== 0) throw new Error(`cyclictest exited with ${r.exitCode}: ${r.stderr.toString()}`);
  return parseCyclictest(r.stdout.toString());
};
