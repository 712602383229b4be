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

/** One thread's summary line: `T: 0 ( 3606) P: 0 I:1000 C:     50 Min:     36 Act:   74 Avg:  614 Max:    6333`. */
export interface CyclictestThread {
  thread: number;
  pid: number;
  priority: number;
  intervalUs: number;
  cycles: number;
  min: number;
  act: number;
  avg: number;
  max: number;
}

const THREAD_LINE =
  /^T: *(\d+) +\( *(\d+)\) +P: *(\d+) +I: *(\d+) +C: *(\d+) +Min: *(\d+) +Act: *(\d+) +Avg: *(\d+) +Max: *(\d+)\s*$/;

/** Every line cyclictest prints with -q (and -h), and its warnings; anything else is refused. */
const KNOWN_LINES = [
  /^\d{6}( +\d+)+\s*$/, // a histogram bucket: latency (us), then a count per thread
  /^# (Histogram|Total:|Min Latencies:|Avg Latencies:|Max Latencies:|Histogram Overflows:|Histogram Overflow at cycle number:|Thread \d+:|\/dev\/cpu_dma_latency set to)/,
  /^WARN: /,
  /^policy: /,
  THREAD_LINE,
];

/** The `T:` summary lines, one per thread; an unknown line is an error, never a NaN. */
export const parseCyclictestThreads = (text: string): CyclictestThread[] => {
  const threads: CyclictestThread[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trimEnd();
    if (line === '') continue;
    if (!KNOWN_LINES.some((re) => re.test(line)))
      throw new Error(
        `cyclictest output line ${i + 1} is not one this parser knows: ${JSON.stringify(line.slice(0, 120))}`,
      );
    const m = THREAD_LINE.exec(line);
    if (m) {
      const [thread, pid, priority, intervalUs, cycles, min, act, avg, max] = m
        .slice(1)
        .map(Number) as number[];
      threads.push({
        thread: thread!,
        pid: pid!,
        priority: priority!,
        intervalUs: intervalUs!,
        cycles: cycles!,
        min: min!,
        act: act!,
        avg: avg!,
        max: max!,
      });
    }
  }
  return threads;
};

/**
 * Reads `cyclictest -q -h N` output for thread 0: the histogram buckets (us) and the summary lines
 * (`# Min Latencies: ...`, or thread 0's `T:` line). Fails loudly on a line it does not know and
 * on output without a histogram (percentiles cannot be read from min/avg/max).
 */
export const parseCyclictest = (text: string): CyclictestResult => {
  const threads = parseCyclictestThreads(text);
  const buckets: [number, number][] = [];
  for (const m of text.matchAll(/^(\d{6}) +(\d+)/gm)) {
    const count = Number(m[2]);
    if (count > 0) buckets.push([Number(m[1]), count]);
  }
  if (!/^# Histogram$/m.test(text))
    throw new Error(
      threads.length
        ? `cyclictest printed no histogram (thread 0: min ${threads[0]!.min}, avg ${threads[0]!.avg}, max ${threads[0]!.max} us over ${threads[0]!.cycles} cycles): run it with -h to read percentiles`
        : 'cyclictest printed neither a histogram nor a summary line',
    );
  const summary = (name: string, fromThread: keyof CyclictestThread | null) => {
    const m = new RegExp(`^# ${name}: *(\\d+)`, 'm').exec(text);
    if (m) return Number(m[1]);
    if (fromThread && threads[0]) return threads[0][fromThread];
    throw new Error(`cyclictest printed a histogram without "# ${name}"`);
  };
  const overflows = /^# Histogram Overflows:/m.test(text) ? summary('Histogram Overflows', null) : 0;
  const max = summary('Max Latencies', 'max');
  const total = buckets.reduce((s, [, c]) => s + c, 0) + overflows;
  const at = (q: number): number => {
    const want = Math.ceil(total * q);
    let seen = 0;
    for (const [us, c] of buckets) {
      seen += c;
      if (seen >= want) return us;
    }
    return max; // in the overflow: at least the histogram's end, at most the maximum
  };
  if (overflows > 0) buckets.push([max, overflows]);
  return {
    buckets,
    samples: total,
    p50: at(0.5),
    p99: at(0.99),
    max,
    min: summary('Min Latencies', 'min'),
    avg: summary('Avg Latencies', 'avg'),
    overflows,
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
