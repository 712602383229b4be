/**
 * CPU lists as Linux writes them (/sys/devices/system/cpu/online, cpuset.cpus, `taskset -c`):
 * `0`, `0-3`, `0-3,8,10-11`. Pure: a strict parser for lists from callers, who may be hostile, and
 * the compact form for answers and messages.
 *
 * Grammar accepted: `entry(,entry)*`, an entry `N` or `N-M` with N <= M, decimal CPU numbers up to
 * MAX_CPU; no spaces, no empty entry, no stride (`0-7:2/4`, which cpuset takes, is refused).
 */

/** The highest CPU number a list may name: Linux's NR_CPUS is at most 8192. */
export const MAX_CPU = 8191;
/**
 * The longest list accepted: room for every second CPU of 256 (`0,2,...,254`, 456 characters);
 * it also bounds the entries to 512, so a list costs at most 8,192 numbers to expand.
 */
export const MAX_CPU_LIST_LENGTH = 1024;

export const CPU_LIST_RULE = `a CPU list such as 0, 0-3 or 0-3,8,10-11 (CPUs 0-${MAX_CPU}, a range low-high, at most ${MAX_CPU_LIST_LENGTH} characters)`;

const ENTRY = /^(\d{1,5})(?:-(\d{1,5}))?$/;

/** The CPUs a list names, ascending and each once; null when the text is no CPU list by the grammar above. */
export const parseCpuList = (text: string): number[] | null => {
  if (text.length === 0 || text.length > MAX_CPU_LIST_LENGTH) return null;
  const cpus = new Set<number>();
  for (const entry of text.split(',')) {
    const m = ENTRY.exec(entry);
    if (!m) return null;
    const low = Number(m[1]);
    const high = m[2] === undefined ? low : Number(m[2]);
    if (high > MAX_CPU || low > high) return null;
    for (let c = low; c <= high; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
};

/** The runs of consecutive CPUs, `[first, last]` each, ascending: [0,1,2,5] -> [[0,2],[5,5]]. */
export const cpuRuns = (cpus: Iterable<number>): [number, number][] => {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const c of sorted) {
    const last = runs.at(-1);
    if (last && c === last[1] + 1) last[1] = c;
    else runs.push([c, c]);
  }
  return runs;
};

/** The compact CPU list: [3,0,1,2,8] -> "0-3,8" (empty for none). */
export const formatCpuList = (cpus: Iterable<number>): string =>
  cpuRuns(cpus)
    .map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`))
    .join(',');
