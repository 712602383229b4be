/** Plain-text renderings of advice and comparisons for a person at a terminal (the CLI's default output). */
import type { ComparisonResult, Difference, Recommendation } from '../domain/advice.ts';

export const formatRecommendation = (r: Recommendation): string =>
  [
    r.summary,
    `  Workload      ${r.workload}`,
    `  Recommended   ${r.recommended ? `${r.recommended.name} (${r.recommended.id}) [${r.recommended.kind}]${r.recommended.installed ? '' : ', not installed yet'}` : 'none'}`,
    `  Confidence    ${r.confidence}: ${r.confidenceReason}`,
    `  Basis         ${r.basis.kind}: ${r.basis.text}`,
    'Reasons:',
    ...r.reasons.map((x) => `  - ${x.text}`),
    ...(r.expectedGain?.length ? ['Expected gain:', ...r.expectedGain.map((g) => `  - ${g.text}`)] : []),
    ...(r.actions.length ? ['How to apply:', ...r.actions.map((a) => `  [${a.via}] ${a.command}`)] : []),
    ...(r.caveats.length ? ['Caveats:', ...r.caveats.map((c) => `  - ${c.text}`)] : []),
  ].join('\n');

const diff = (d: Difference): string =>
  `${d.percent >= 0 ? '+' : ''}${d.percent}% (${d.low}..${d.high})${d.significant ? '' : ' ~'}`;

export const formatComparison = (c: ComparisonResult): string => {
  if (c.dryRun) {
    return [
      `Dry run: would compare ${c.planned.map((p) => p.name).join(', ')} (${c.profile} profile, settle ${c.settleMs} ms), then restore ${c.original.name}.`,
      ...c.warnings.map((w) => `Warning: ${w}`),
    ].join('\n');
  }
  return [
    `Compared ${c.results.length} plans; ${c.original.name} ${c.restored ? 'restored' : 'NOT restored'}.`,
    'Plan (benchmark)                         burst after idle   single thread   all cores   (vs original, + = better, ~ = within noise)',
    ...c.results.map((e) => {
      const head = `${e.plan.name} (${e.benchmarkId})`.padEnd(40);
      const f = e.figures;
      const figs = `${f.burstAfterIdleMs.median.toFixed(1)} ms +${f.burstPenaltyPercent.toFixed(1)}%   ${f.singleThreadMops.median.toFixed(0)} Mops/s   ${f.allCoreMops.toFixed(0)} Mops/s`;
      const d = e.difference
        ? `  [${diff(e.difference.burstAfterIdle)} | ${diff(e.difference.singleThread)} | ${diff(e.difference.allCore)}]`
        : '  [original]';
      return `${head} ${figs}${d}${f.noisy ? ' [noisy]' : ''}`;
    }),
    '',
    ...(c.recommendation ? [formatRecommendation(c.recommendation)] : []),
    ...c.warnings.map((w) => `Warning: ${w}`),
  ].join('\n');
};
