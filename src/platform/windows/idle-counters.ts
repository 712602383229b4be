/**
 * The live idle counters of a Windows host: the raw Processor Information counters from WMI
 * (`Win32_PerfRawData_Counters_ProcessorInformation`), whose property names come from the class's
 * MOF and do not depend on the display language (typeperf and Get-Counter paths are localized).
 * One PowerShell process per read (Windows offers no file to read them from): reads closer than
 * MIN_INTERVAL_MS apart share one query, so a scrape every few seconds starts no more programs.
 *
 * Grammar of the output (`Format-List`, one block per instance, blocks split by a blank line):
 *   `Name                 : 0,1`            processor group,number; `_Total` and `0,_Total` are sums
 *   `PercentC1Time        : 123456789`      PERF_100NSEC_TIMER: time in C1, 100 ns units
 *   `C1TransitionsPersec  : 4242`           PERF_COUNTER_BULK_COUNT: entries into C1
 *   `PercentIdleTime      : ...`            PERF_100NSEC_TIMER: idle time, 100 ns units
 *   `Timestamp_PerfTime   : ...`            the sample's time in ticks of the performance counter,
 *   `Frequency_PerfTime   : ...`            ticks per second (the counter starts at boot, so this is uptime)
 */

import { PowerPlanError } from '../../domain/errors.ts';
import type { CpuCounters, IdleCounterReader, IdleSnapshot, StateCounters } from '../../domain/workload.ts';
import { type RunFn, runCommand } from '../../lib/run-command.ts';

export const PROCESSOR_CLASS = 'Win32_PerfRawData_Counters_ProcessorInformation';
const STATES = ['C1', 'C2', 'C3'] as const;
const PROPERTIES = [
  'Name',
  'PercentIdleTime',
  ...STATES.flatMap((s) => [`Percent${s}Time`, `${s}TransitionsPersec`]),
  'Timestamp_PerfTime',
  'Frequency_PerfTime',
];

/** The query: fixed text, no caller input. */
export const PROCESSOR_SCRIPT = `Get-CimInstance -ClassName ${PROCESSOR_CLASS} | Format-List -Property ${PROPERTIES.join(',')}`;

/** Reads closer together than this share one query. */
export const MIN_INTERVAL_MS = 5_000;

/** `Key : Value` blocks, one per instance. */
export const parseFormatList = (text: string): Record<string, string>[] => {
  const out: Record<string, string>[] = [];
  let cur: Record<string, string> | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const m = /^(\w+)\s*:\s?(.*)$/.exec(raw.trim());
    if (!m) {
      if (raw.trim() === '' && cur) {
        out.push(cur);
        cur = null;
      }
      continue;
    }
    cur ??= {};
    cur[m[1]!] = m[2]!.trim();
  }
  if (cur) out.push(cur);
  return out;
};

const num = (s: string | undefined): number | null => (s !== undefined && /^\d+$/.test(s) ? Number(s) : null);

/** The instances `group,number` as counters (100 ns turned to us); the sums (`_Total`) are left out. */
export const snapshotFromInstances = (instances: Record<string, string>[]): IdleSnapshot => {
  const cpus: CpuCounters[] = [];
  let at = 0;
  for (const i of instances) {
    const m = /^(\d+),(\d+)$/.exec(i.Name ?? '');
    if (!m) continue;
    const ticks = num(i.Timestamp_PerfTime);
    const hz = num(i.Frequency_PerfTime);
    // Seconds since boot, the clock idle time counts from too.
    const upS = ticks !== null && hz ? ticks / hz : null;
    if (upS !== null) at = Math.max(at, upS);
    const states: StateCounters[] = STATES.flatMap((s) => {
      const time = num(i[`Percent${s}Time`]);
      const usage = num(i[`${s}TransitionsPersec`]);
      return time === null || usage === null
        ? []
        : [
            {
              name: s,
              exitLatencyUs: null,
              usage,
              timeUs: time / 10,
              above: null,
              below: null,
              disabled: false,
            },
          ];
    });
    const idle = num(i.PercentIdleTime);
    cpus.push({
      // Group g, number n: 64 logical processors per group at most.
      cpu: Number(m[1]) * 64 + Number(m[2]),
      busyUs: upS !== null && idle !== null ? Math.max(0, upS * 1e6 - idle / 10) : null,
      totalUs: upS !== null ? upS * 1e6 : null,
      idleUs: idle === null ? null : idle / 10,
      states,
      wakeups: null,
    });
  }
  return { source: 'windows-counters', atS: at, cpus: cpus.sort((a, b) => a.cpu - b.cpu) };
};

export interface WindowsIdleReaderOptions {
  powershell: string;
  run?: RunFn;
}

export const createWindowsIdleReader = (o: WindowsIdleReaderOptions): IdleCounterReader => {
  let last: { at: number; value: Promise<IdleSnapshot> } | undefined;
  const query = async (): Promise<IdleSnapshot> => {
    const r = await (o.run ?? runCommand)(
      o.powershell,
      ['-NoLogo', '-NoProfile', '-NonInteractive', '-InputFormat', 'None', '-Command', PROCESSOR_SCRIPT],
      { timeoutMs: 30_000 },
    );
    if (r.exitCode !== 0)
      throw new PowerPlanError(
        'os_error',
        `PowerShell could not read ${PROCESSOR_CLASS}: ${r.stderr.toString('utf8').trim()}`,
      );
    const snap = snapshotFromInstances(parseFormatList(r.stdout.toString('utf8')));
    if (!snap.cpus.length)
      throw new PowerPlanError('os_error', `${PROCESSOR_CLASS} listed no processor instance`);
    return snap;
  };
  return () => {
    if (last && Date.now() - last.at < MIN_INTERVAL_MS) return last.value;
    const value = query();
    last = { at: Date.now(), value };
    value.catch(() => {
      if (last?.value === value) last = undefined;
    });
    return value;
  };
};
