/** Tables of the fleet commands for people (the CLI's --json prints the REST JSON instead). */
import type { FleetHostList, FleetSetResult, FleetStatus } from '../domain/fleet.ts';
import { table } from '../lib/table.ts';

const hostCount = (n: number) => `${n} host${n === 1 ? '' : 's'}`;

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

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
          h.plan ? cut(h.plan.name, 28) : '-',
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
    ...(failed.length ? ['', ...failed.map((h) => `${h.name}: ${h.error!.title}: ${h.error!.detail}`)] : []),
    '',
    `${hostCount(m.total)}: ${m.ok} ok, ${m.unreachable} unreachable, ${m.unauthorized} unauthorized, ${m.error} error; ${m.changeRecommended} advised to switch.`,
    ...(s.source.kind === 'prometheus'
      ? [`As scraped: from Prometheus ${s.source.name}, evaluated at ${s.source.evaluatedAt ?? '?'}.`]
      : []),
  ].join('\n');
};

export const formatFleetSet = (r: FleetSetResult): string => {
  const rows = r.hosts.map((h) =>
    h.error
      ? [h.name, h.status, `${h.error.title}: ${cut(h.error.detail, 70)}`]
      : [
          h.name,
          r.dryRun ? (h.changed ? 'would change' : 'would keep') : h.changed ? 'changed' : 'unchanged',
          `${h.before?.name ?? '?'} -> ${h.after?.name ?? '?'}${h.warnings?.length ? ` (warning: ${h.warnings.join('; ')})` : ''}`,
        ],
  );
  const m = r.summary;
  return [
    table(['HOST', 'OUTCOME', 'PLAN'], rows),
    '',
    `${r.dryRun ? 'Dry run, nothing changed: ' : ''}${hostCount(m.total)}: ${m.changed} ${r.dryRun ? 'would change' : 'changed'}, ${m.unchanged} already on the plan, ${m.failed} failed.`,
  ].join('\n');
};

export const formatFleetHosts = (l: FleetHostList): string =>
  [
    table(
      ['HOST', 'URL', 'TAGS', 'AUTH', 'TLS'],
      l.hosts.map((h) => [h.name, h.url, h.tags.join(',') || '-', h.auth, h.tls]),
    ),
    '',
    `${hostCount(l.hosts.length)} from the ${l.source}.`,
  ].join('\n');
