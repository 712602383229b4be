/** Tables of the fleet commands for people (the CLI's --json prints the REST JSON instead). */
import type { FleetHostList, FleetSetResult, FleetStatus } from '../domain/fleet.ts';
import { table } from '../lib/table.ts';

const hostCount = (n: number) => `${n} host${n === 1 ? '' : 's'}`;

/** Where a page ends, and how to see the rest. */
const more = (a: { matched: number; nextCursor: string | null }, shown: number): string[] =>
  a.nextCursor === null
    ? []
    : [`Shown ${shown} of ${a.matched}: --all for every page, or --cursor ${a.nextCursor} for the next.`];

/** Counts per key, as "3 balanced, 1 power-saver". */
const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, n]) => `${n} ${k}`)
    .join(', ') || 'none';

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A host of an answer, with the pointers to the text its agent wrote. */
interface Reported {
  reportedByAgent: string[];
}
const byAgent = (h: Reported, pointer: string) =>
  h.reportedByAgent.some((p) => pointer === p || pointer.startsWith(`${p}/`));
/** The agent's words in quotes (JSON's, so that nothing in them can pass for our own text). */
const quoted = (h: Reported, pointer: string, text: string) =>
  byAgent(h, pointer) ? JSON.stringify(text) : text;
/** Why a host failed: our words as they are, the agent's own problem quoted after "agent says:". */
const problem = (h: Reported & { error?: { title: string; detail: string } | undefined }) =>
  !h.error
    ? ''
    : byAgent(h, '/error/detail')
      ? `agent says: ${JSON.stringify(`${h.error.title}: ${h.error.detail}`)}`
      : `${h.error.title}: ${h.error.detail}`;

/** An edited plan, settings not in force, a host where firmware or the hypervisor decides. */
const checks = (h: FleetStatus['hosts'][number]): string =>
  [
    h.edited ? 'edited' : '',
    h.mismatches ? `${h.mismatches} not in force` : '',
    h.controlledBy === 'hypervisor' || h.controlledBy === 'firmware' ? `${h.controlledBy} decides` : '',
  ]
    .filter(Boolean)
    .join(', ') || '-';

export const formatFleetStatus = (s: FleetStatus): string => {
  const rows = s.hosts.map((h) =>
    h.status === 'ok'
      ? [
          h.name,
          'ok',
          h.plan ? quoted(h, '/plan/name', cut(h.plan.name, 28)) : '-',
          h.plan?.kind ?? '-',
          h.recommendation
            ? h.recommendation.changeRecommended
              ? `switch to ${h.recommendation.kind ?? '?'}`
              : 'keep'
            : '-',
          h.burstPenaltyPercent === null ? '-' : `${h.burstPenaltyPercent.toFixed(1)}%`,
          h.drift ?? '-',
          h.holds ? String(h.holds) : '-',
          checks(h),
        ]
      : [h.name, h.status, '-', '-', '-', '-', '-', '-', '-'],
  );
  const failed = s.hosts.filter((h) => h.error);
  const m = s.summary;
  return [
    table(['HOST', 'STATUS', 'PLAN', 'KIND', 'ADVICE', 'BURST', 'DRIFT', 'HOLDS', 'CHECKS'], rows),
    ...(failed.length ? ['', ...failed.map((h) => `${h.name}: ${problem(h)}`)] : []),
    '',
    `${hostCount(m.total)}: ${m.ok} ok, ${m.unreachable} unreachable, ${m.unauthorized} unauthorized, ${m.error} error; ${m.changeRecommended} advised to switch.`,
    `Plans: ${counts(m.byKind)}. Advice: ${m.byAdvice.keep} keep, ${m.byAdvice.switch} switch, ${m.byAdvice.none} none. Desired state: ${counts(m.byDrift)}.`,
    ...more(s, s.hosts.length),
    ...(s.source.kind === 'prometheus'
      ? [`As scraped: from Prometheus ${s.source.name}, evaluated at ${s.source.evaluatedAt ?? '?'}.`]
      : []),
  ].join('\n');
};

export const formatFleetSet = (r: FleetSetResult): string => {
  const rows = r.hosts.map((h) =>
    h.error
      ? [h.name, h.status, cut(problem(h), 100)]
      : [
          h.name,
          r.dryRun ? (h.changed ? 'would change' : 'would keep') : h.changed ? 'changed' : 'unchanged',
          `${quoted(h, '/before/name', h.before?.name ?? '?')} -> ${quoted(h, '/after/name', h.after?.name ?? '?')}${
            h.warnings?.length
              ? ` (warning, agent says: ${h.warnings.map((w) => JSON.stringify(w)).join('; ')})`
              : ''
          }`,
        ],
  );
  const m = r.summary;
  return [
    table(['HOST', 'OUTCOME', 'PLAN'], rows),
    '',
    `${r.dryRun ? 'Dry run, nothing changed: ' : ''}${hostCount(m.total)}: ${m.changed} ${r.dryRun ? 'would change' : 'changed'}, ${m.unchanged} already on the plan, ${m.failed} failed.`,
    ...more(r, r.hosts.length),
  ].join('\n');
};

export const formatFleetHosts = (l: FleetHostList): string =>
  [
    table(
      ['HOST', 'URL', 'TAGS', 'AUTH', 'TLS'],
      l.hosts.map((h) => [h.name, h.url, h.tags.join(',') || '-', h.auth, h.tls]),
    ),
    '',
    `${hostCount(l.matched)} from the ${l.source}.`,
    ...more(l, l.hosts.length),
  ].join('\n');
