/** Plain-text renderings of advice and comparisons for a person at a terminal (the CLI's default output). */
import type { ComparisonResult, Difference, Recommendation } from '../domain/advice.ts';
import { facts, signed, table } from '../lib/table.ts';

export const formatRecommendation = (r: Recommendation): string =>
  [
    r.summary,
    ...facts(
      [
        ['Workload', r.workload],
        [
          'Recommended',
          r.recommended
            ? `${r.recommended.name} (${r.recommended.id}) [${r.recommended.kind}]${r.recommended.installed ? '' : ', not installed yet'}`
            : 'none',
        ],
        ['Confidence', `${r.confidence}: ${r.confidenceReason}`],
        ['Basis', `${r.basis.kind}: ${r.basis.text}`],
      ],
      { width: 13 },
    ),
    'Reasons:',
    ...r.reasons.map((x) => `  - ${x.text}`),
    ...(r.expectedGain?.length ? ['Expected gain:', ...r.expectedGain.map((g) => `  - ${g.text}`)] : []),
    ...(r.actions.length ? ['How to apply:', ...r.actions.map((a) => `  [${a.via}] ${a.command}`)] : []),
    ...(r.halves
      ? [`Both halves: ${r.halves.text}`, ...r.halves.settings.map((a) => `  [${a.via}] ${a.command}`)]
      : []),
    ...(r.caveats.length ? ['Caveats:', ...r.caveats.map((c) => `  - ${c.text}`)] : []),
  ].join('\n');

/** The mark of each verdict (measure.ts, `noiseVerdict`): none when the range says which way. */
const MARK: Record<Difference['verdict'], string> = {
  better: '',
  worse: '',
  'within-noise': ' ~',
  noisy: ' ?',
};

/** `+12.3% (8.1..16.0)`, marked `~` when the range touches 0 and `?` when a run was noisy. */
const diff = (d: Difference): string =>
  `${signed(d.percent)}% (${d.low.toFixed(1)}..${d.high.toFixed(1)})${MARK[d.verdict]}`;

export const formatComparison = (c: ComparisonResult): string => {
  if (c.dryRun) {
    return [
      `Dry run: would compare ${c.planned.map((p) => p.name).join(', ')} (${c.profile} profile, settle ${c.settleMs} ms), then restore ${c.original.name}.`,
      ...c.warnings.map((w) => `Warning: ${w}`),
    ].join('\n');
  }
  const rows = c.results.map((e) => {
    const f = e.figures;
    const d = e.difference;
    return [
      e.plan.name,
      e.benchmarkId,
      `${f.burstAfterIdleMs.median.toFixed(1)} ms`,
      `${signed(f.burstPenaltyPercent)}%`,
      `${f.singleThreadMops.median.toFixed(0)} Mops/s`,
      `${f.allCoreMops.toFixed(0)} Mops/s`,
      d ? diff(d.burstAfterIdle) : 'original',
      d ? diff(d.singleThread) : 'original',
      d ? diff(d.allCore) : 'original',
      f.noisy ? 'noisy' : '',
    ];
  });
  const gap = c.results[0]?.figures.idleGapMs;
  return [
    `Compared ${c.results.length} plans; ${c.original.name} ${c.restored ? 'restored' : 'NOT restored'}.`,
    table(
      [
        'plan',
        'benchmark',
        'burst',
        'penalty',
        'single thread',
        'all cores',
        'burst vs original',
        'single vs original',
        'all vs original',
        '',
      ],
      rows,
      ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    ),
    `(burst after ${gap ?? 0} ms idle, penalty = slower than warm; vs original in %, + = better, (low..high) the ` +
      'range, ~ = the range touches 0 (within the noise), ? = a run was noisy, not judged)',
    '',
    ...(c.recommendation ? [formatRecommendation(c.recommendation)] : []),
    ...c.warnings.map((w) => `Warning: ${w}`),
  ].join('\n');
};
