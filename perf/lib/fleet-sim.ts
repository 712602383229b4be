/**
 * A simulated fleet in Prometheus: what `count` agents' scrapes leave in the TSDB, written as
 * OpenMetrics (the families and labels the agents expose, the target labels file_sd gives them)
 * and loaded with `promtool tsdb create-blocks-from openmetrics`. Most hosts' last four scrapes,
 * 30 s apart, end at `endS`; 1% have failing scrapes (up 0) since 10 minutes before, 0.5% are no
 * longer scraped since 20 minutes before. Deterministic: host i always looks the same.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { promisify } from 'node:util';
import { PROMTOOL } from '../../test/support/prometheus.ts';

const execFileP = promisify(execFile);

const plans = [
  { id: '381b4222-f694-41f0-9685-ff5bb260df2e', name: 'Balanced', kind: 'balanced' },
  { id: '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c', name: 'High performance', kind: 'high-performance' },
  { id: 'a1841308-3541-4fab-bc81-f71556f20b4a', name: 'Power saver', kind: 'power-saver' },
] as const;
const gaps = ['0.05', '0.2', '1'];
const desiredStates = ['in-desired-state', 'drift', 'held', 'policy-managed', 'unknown-plan'];

export interface SimHost {
  name: string;
  tags: string[];
  /** ok: scraped up to now; failing: up 0 for the last 10 minutes; gone: no longer scraped. */
  state: 'ok' | 'failing' | 'gone';
  plan: (typeof plans)[number];
}

export const simHost = (i: number): SimHost => ({
  name: `db${String(i).padStart(5, '0')}`,
  tags: [i % 3 === 0 ? 'web' : 'sql', ...(i % 10 === 0 ? ['prod'] : [])],
  state: i % 200 === 7 ? 'gone' : i % 100 === 3 ? 'failing' : 'ok',
  plan: plans[i % 7 === 0 ? 2 : i % 2]!,
});

/** Writes the OpenMetrics text of `count` hosts, samples every `stepS` s, ending `endS` (Unix s). */
export const writeOpenMetrics = async (
  path: string,
  count: number,
  endS: number,
  stepS = 30,
): Promise<number> => {
  const out = createWriteStream(path);
  let lines = 0;
  let buffer = '';
  const emit = async (line: string) => {
    buffer += `${line}\n`;
    lines++;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  };
  const hosts = Array.from({ length: count }, (_, i) => simHost(i));
  // A few scrapes each, `stepS` apart: enough for instant queries, small enough to write fast.
  const failedSince = endS - 10 * 60;
  const goneAt = endS - 20 * 60;
  const scrapes = (last: number) => [3, 2, 1, 0].map((k) => last - k * stepS);
  const recent = scrapes(endS);
  const target = (h: SimHost) =>
    `fleet_host="${h.name}",fleet_tags=",${h.tags.join(',')},",instance="${h.name}.example.com:8750",job="powerplan"`;
  /** When `up` has samples: until a gone host went; a failing host's good and failed scrapes. */
  const upTimes = (h: SimHost) =>
    h.state === 'gone'
      ? scrapes(goneAt)
      : h.state === 'failing'
        ? [...scrapes(failedSince), ...recent]
        : recent;
  /** When the agent's own series have samples: only while its scrapes worked. */
  const ownTimes = (h: SimHost) =>
    h.state === 'gone' ? scrapes(goneAt) : h.state === 'failing' ? scrapes(failedSince) : recent;
  const family = async (
    name: string,
    type: 'gauge' | 'unknown',
    series: (h: SimHost, i: number) => [string, number | ((t: number) => number)][],
    which: (h: SimHost) => number[] = ownTimes,
  ) => {
    await emit(`# TYPE ${name} ${type}`);
    for (const [i, h] of hosts.entries()) {
      const ts = which(h);
      for (const [labels, value] of series(h, i)) {
        const l = `{${target(h)}${labels ? `,${labels}` : ''}}`;
        for (const t of ts) await emit(`${name}${l} ${typeof value === 'number' ? value : value(t)} ${t}`);
      }
    }
  };
  // A failing host's scrapes fail (up 0) since it stopped answering.
  await family(
    'up',
    'gauge',
    (h) => [['', (t) => (h.state === 'failing' && t > failedSince ? 0 : 1)]],
    upTimes,
  );
  await family('scrape_duration_seconds', 'gauge', (_h, i) => [['', 0.004 + (i % 13) / 1000]], upTimes);
  await family('powerplan_backend_up', 'gauge', () => [['', 1]]);
  await family('powerplan_active_plan_info', 'gauge', (h) => [
    [`id="${h.plan.id}",name="${h.plan.name}",kind="${h.plan.kind}",backend="windows",owner="powercfg"`, 1],
  ]);
  await family('powerplan_policy_managed', 'gauge', (_h, i) => [['', i % 50 === 0 ? 1 : 0]]);
  await family('powerplan_plan_settable', 'gauge', (_h, i) => [['', i % 50 === 0 ? 0 : 1]]);
  await family('powerplan_holds_active', 'gauge', (_h, i) => [['', i % 40 === 0 ? 1 : 0]]);
  await family('powerplan_plan_change_recommended', 'gauge', (h) => [
    ['', h.plan.kind === 'high-performance' ? 0 : 1],
  ]);
  await family('powerplan_recommended_plan_info', 'gauge', () => [
    [`id="${plans[1].id}",name="${plans[1].name}",kind="${plans[1].kind}"`, 1],
  ]);
  await family('powerplan_desired_plan_status', 'gauge', (_h, i) =>
    i % 5 === 0
      ? desiredStates.map((s) => [`status="${s}"`, s === (i % 10 ? 'in-desired-state' : 'drift') ? 1 : 0])
      : [],
  );
  await family('powerplan_benchmark_burst_penalty_ratio', 'gauge', (h, i) =>
    i % 10 < 7
      ? gaps.map((g, k) => [`gap_seconds="${g}"`, h.plan.kind === 'balanced' ? 0.1 * (k + 1) : 0.01])
      : [],
  );
  for (const ratio of ['min_state', 'max_state', 'epp'])
    await family(`powerplan_processor_${ratio}_ratio`, 'gauge', () => [
      ['power="ac"', 1],
      ['power="dc"', 1],
    ]);
  await emit('# EOF');
  out.end(buffer);
  await once(out, 'finish');
  return lines;
};

/** Loads the OpenMetrics file into TSDB blocks in `dataDir`. */
export const createBlocks = (openMetrics: string, dataDir: string) =>
  execFileP(PROMTOOL, ['tsdb', 'create-blocks-from', 'openmetrics', openMetrics, dataDir], {
    maxBuffer: 16 * 1024 * 1024,
  });
