/**
 * The System log's Microsoft-Windows-Kernel-Processor-Power events, as `wevtutil qe ... /f:xml`
 * prints them: 55 (per processor: the idle states and performance control the firmware gives the
 * OS) and 37 (the processor speed is being limited by system firmware). Only the XML's element and
 * attribute names are read, never the localized message text. Also: who controls the processor,
 * decided from those facts.
 */
import { errorMessage } from '../../domain/errors.ts';
import type {
  Control,
  ControlEvidence,
  FirmwareLimit,
  ProcessorGroupCapabilities,
} from '../../domain/idle.ts';
import type { RunFn } from '../../lib/run-command.ts';
import { quote } from './powercfg-command.ts';

export const PROCESSOR_POWER_PROVIDER = 'Microsoft-Windows-Kernel-Processor-Power';

/** The XPath query for wevtutil: both event ids of the provider, newest first with /rd:true. */
export const EVENTS_QUERY = `*[System[Provider[@Name='${PROCESSOR_POWER_PROVIDER}'] and (EventID=55 or EventID=37 or EventID=26)]]`;

export interface ProcessorEvent {
  id: number;
  time: string | null;
  data: Record<string, string>;
}

const xmlText = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

/** Every `<Event>` of the provider in the text (one per line, or pretty-printed), in the order given. */
export const parseEvents = (xml: string): ProcessorEvent[] => {
  const out: ProcessorEvent[] = [];
  for (const m of xml.matchAll(/<Event[\s>][\s\S]*?<\/Event>/g)) {
    const ev = m[0];
    const provider = /<Provider\s+Name=['"]([^'"]+)['"]/.exec(ev)?.[1];
    if (provider !== PROCESSOR_POWER_PROVIDER) continue;
    const id = Number(/<EventID(?:\s[^>]*)?>(\d+)<\/EventID>/.exec(ev)?.[1]);
    if (!Number.isInteger(id)) continue;
    const raw = /<TimeCreated\s+SystemTime=['"]([^'"]+)['"]/.exec(ev)?.[1];
    const time = raw && !Number.isNaN(Date.parse(raw)) ? new Date(raw).toISOString() : null;
    const data: Record<string, string> = {};
    for (const d of ev.matchAll(/<Data\s+Name=['"]([^'"]+)['"]\s*(?:\/>|>([\s\S]*?)<\/Data>)/g)) {
      data[d[1]!] = xmlText((d[2] ?? '').trim());
    }
    out.push({ id, time, data });
  }
  return out;
};

const num = (s: string | undefined): number | null => {
  if (s === undefined || s === '') return null;
  const n = /^0x[0-9a-f]+$/i.test(s) ? Number.parseInt(s, 16) : Number(s);
  return Number.isFinite(n) ? n : null;
};

const newestFirst = (events: ProcessorEvent[]) =>
  [...events].sort((a, b) => (b.time ?? '').localeCompare(a.time ?? ''));

/**
 * The latest event 55 of each processor group; where a group has none, its latest event 26 (older
 * Windows: counts of idle, performance and throttle states; no performance or throttle state means
 * no performance control, type 0).
 */
export const groupCapabilities = (events: ProcessorEvent[]): ProcessorGroupCapabilities[] => {
  const byGroup = new Map<number, ProcessorGroupCapabilities>();
  const sorted = newestFirst(events);
  for (const e of [...sorted.filter((x) => x.id === 55), ...sorted.filter((x) => x.id === 26)]) {
    const group = num(e.data.Group) ?? 0;
    if (byGroup.has(group)) continue;
    const perf = num(e.data.PerfStateCount);
    const throttle = num(e.data.ThrottleStateCount);
    byGroup.set(group, {
      group,
      processor: num(e.data.Number) ?? 0,
      time: e.time,
      ...(e.id === 26 ? { event: 26 } : {}),
      idleStateCount: num(e.data.IdleStateCount),
      idleImplementation: num(e.data.IdleImplementation),
      performanceImplementation:
        e.id === 26 ? (perf === 0 && throttle === 0 ? 0 : null) : num(e.data.PerformanceImplementation),
      nominalFrequencyMHz: num(e.data.NominalFrequency),
      maximumPerformancePercent: num(e.data.MaximumPerformancePercent),
      minimumPerformancePercent: num(e.data.MinimumPerformancePercent),
      minimumThrottlePercent: num(e.data.MinimumThrottlePercent),
    });
  }
  return [...byGroup.values()].sort((a, b) => a.group - b.group);
};

/** Every event 37 (newest first, at most `limit`). */
export const firmwareLimits = (events: ProcessorEvent[], limit = 16): FirmwareLimit[] =>
  newestFirst(events)
    .filter((e) => e.id === 37)
    .slice(0, limit)
    .map((e) => ({
      group: num(e.data.Group) ?? 0,
      processor: num(e.data.Number) ?? 0,
      time: e.time,
      seconds: num(e.data.CapDurationInSeconds),
    }));

/**
 * Who controls the processor, from events 55/37 and the VM detection: no performance control in
 * event 55 means nothing in the OS can change the clock (a VM's host or the firmware decides); a
 * single idle state means the OS cannot choose how deep cores sleep; event 37 says the firmware caps
 * the speed.
 */
export const windowsControl = (
  events: ProcessorEvent[] | null,
  vm: string | null,
  unreadable?: string,
): Control => {
  if (events === null) {
    return {
      decidedBy: 'unknown',
      clockControl: null,
      idleControl: null,
      evidence: [
        {
          source: 'wevtutil',
          value: null,
          text: `the System log could not be read (${unreadable ?? 'wevtutil failed'}), so who controls the processor is unknown`,
        },
      ],
    };
  }
  const groups = groupCapabilities(events);
  const limits = firmwareLimits(events);
  const evidence: ControlEvidence[] = [];
  for (const g of groups) {
    evidence.push({
      source: `event ${g.event ?? 55} (group ${g.group})`,
      value: g.performanceImplementation,
      text:
        g.performanceImplementation === 0
          ? `processor ${g.processor} in group ${g.group}: no performance control (type 0) and ${g.idleStateCount ?? '?'} idle state(s): the OS cannot change the clock`
          : `processor ${g.processor} in group ${g.group}: performance control type ${g.performanceImplementation}, ${g.idleStateCount ?? '?'} idle state(s), ${g.minimumPerformancePercent ?? '?'}-${g.maximumPerformancePercent ?? '?'}% of ${g.nominalFrequencyMHz ?? '?'} MHz`,
    });
  }
  if (limits.length) {
    const l = limits[0]!;
    evidence.push({
      source: 'event 37',
      value: l.seconds,
      text: `the firmware limited processor ${l.processor} in group ${l.group}${l.seconds !== null ? ` for ${l.seconds} s` : ''} (${limits.length} report(s)): no plan setting lifts that cap`,
    });
  }
  if (!groups.length) {
    evidence.push({
      source: 'event 55',
      value: null,
      text: 'no event 55 (or 26) in the System log (it is written at boot; the log may have been cleared)',
    });
  }
  const clockControl = groups.length ? groups.some((g) => (g.performanceImplementation ?? 1) !== 0) : null;
  const idleControl = groups.length ? groups.some((g) => (g.idleStateCount ?? 2) > 1) : null;
  const decidedBy: Control['decidedBy'] =
    clockControl === false
      ? vm
        ? 'hypervisor'
        : 'firmware'
      : limits.length
        ? 'firmware'
        : clockControl
          ? 'os'
          : 'unknown';
  return {
    decidedBy,
    clockControl,
    idleControl,
    evidence,
    processorGroups: groups,
    ...(limits.length ? { firmwareLimits: limits } : {}),
  };
};

/** How long the event log answer is reused: events 55/37 are written at boot and rarely after. */
const EVENTS_TTL_MS = 10 * 60_000;

export interface EventReaderOptions {
  /** wevtutil.exe; null: the events are not read. */
  path: string | null;
  run: RunFn;
  timeoutMs: number;
  decode: (bytes: Buffer) => Promise<string>;
}

/** Events 55 and 37, newest first, read at most every ten minutes; null (and why) when the System log cannot be read. */
export const createEventReader = ({ path, run, timeoutMs, decode }: EventReaderOptions) => {
  let eventsAt = 0;
  let events: Promise<{ events: ProcessorEvent[] | null; reason?: string }> | undefined;
  return () => {
    if (!path) return Promise.resolve({ events: null, reason: 'wevtutil is not configured' });
    if (!events || Date.now() - eventsAt > EVENTS_TTL_MS) {
      eventsAt = Date.now();
      events = (async () => {
        try {
          const r = await run(path, ['qe', 'System', `/q:${EVENTS_QUERY}`, '/c:256', '/rd:true', '/f:xml'], {
            timeoutMs,
          });
          if (r.exitCode !== 0) {
            return {
              events: null,
              reason: `wevtutil exited with ${r.exitCode}: ${quote(await decode(r.stderr))}`,
            };
          }
          return { events: parseEvents(await decode(r.stdout)) };
        } catch (e) {
          return { events: null, reason: errorMessage(e) };
        }
      })();
    }
    return events;
  };
};
