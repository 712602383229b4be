/** Plain-text renderings of benchmark results for a person at a terminal (the CLI's default output). */
import type { BenchmarkList, BenchmarkResult, Stats } from '../domain/benchmark.ts';
import { type Fact, facts, signed, table } from '../lib/table.ts';

const indent = (text: string): string => text.replace(/^/gm, '  ');
const threads = (n: number): string => `${n} thread${n === 1 ? '' : 's'}`;

const num = (x: number, digits = 1): string => x.toFixed(digits);
const range = (s: Stats, digits = 1): string =>
  `${num(s.median, digits)} ${s.unit} (p10 ${num(s.p10, digits)}, p90 ${num(s.p90, digits)}, n=${s.n})`;
const mark = (noisy: boolean): string => (noisy ? '  [noisy]' : '');
/** The result's figures, their values in one column. */
const figures = (rows: Fact[]): string[] => facts(rows, { width: 15, indent: '' });

export const formatResult = (r: BenchmarkResult): string => {
  const { phases: ph, environment: env } = r;
  const plan = env.activePlan?.plan;
  const lines = [
    `Benchmark ${r.id}: ${r.profile} profile, ${threads(r.threads)}, ${num(r.durationMs / 1000)} s`,
    ...facts(
      [
        ['Plan', `${plan ? `${plan.name} (${plan.id})` : 'none exposed'} [${env.backend}]`],
        [
          'CPU',
          `${env.cpu.model}, ${env.cpu.logicalCpus} logical CPUs${env.virtualization?.detected ? `, VM (${env.virtualization.kind ?? 'unknown'})` : ''}`,
        ],
        ['Load before', `${num(env.loadBefore.cpuBusyPercent)}% busy${r.forced ? ' (forced)' : ''}`],
      ],
      { width: 13 },
    ),
    '',
    ...figures([
      [
        'Warm burst',
        `${range(ph.warmBaseline.burstMs, 2)} for ${ph.warmBaseline.burstUnits} units of ${num(ph.calibration.unitMs.value, 2)} ms${mark(ph.warmBaseline.noisy)}`,
      ],
    ]),
    'Burst after idle (penalty = slower than warm):',
    indent(
      table(
        ['idle gap', 'penalty', 'ratio p10..p90', 'ramp-up', ''],
        ph.burstsAfterIdle.map((g) => [
          `${g.idleGapMs} ms`,
          `${signed(g.penaltyPercent.value)}%`,
          `${num(g.penalty.p10, 2)}..${num(g.penalty.p90, 2)}`,
          `${num(g.rampUpMs.median)} ms`,
          [g.unsettled ? `${g.unsettled} never settled` : '', g.noisy ? 'noisy' : '']
            .filter(Boolean)
            .join(', '),
        ]),
        ['right', 'right', 'right', 'right'],
      ),
    ),
    ...(ph.wakeUp
      ? [
          `Wake-up after idle (small unit ${num(ph.wakeUp.unitUs.value, 1)} us warm, ${ph.wakeUp.rounds} samples per gap):`,
          table(
            ['gap', 'overshoot p50/p99/max us', 'first unit p50/p99 x warm'],
            ph.wakeUp.gaps.map((g) => [
              g.gapUs >= 1000 ? `${g.gapUs / 1000} ms` : `${g.gapUs} us`,
              `${num(g.overshootUs.p50)} / ${num(g.overshootUs.p99)} / ${num(g.overshootUs.max)}`,
              `${num(g.firstUnitSlowdown.p50, 2)} / ${num(g.firstUnitSlowdown.p99, 2)}`,
            ]),
            ['right'],
            '  ',
          ),
        ]
      : []),
    ...figures([
      [
        'Single thread',
        `${num(ph.sustainedSingle.throughput.value)} Mops/s${mark(ph.sustainedSingle.noisy)}`,
      ],
      [
        'All cores',
        `${num(ph.sustainedAllCore.throughput.value)} Mops/s on ${threads(ph.sustainedAllCore.threads)} ` +
          `(speedup ${num(ph.sustainedAllCore.speedup.value, 2)}x, efficiency ${num(ph.sustainedAllCore.scalingEfficiency.value * 100, 0)}%)${mark(ph.sustainedAllCore.noisy)}`,
      ],
      ['Both halves', r.summary.headline || undefined],
    ]),
    ...r.warnings.map((w) => `Warning: ${w}`),
  ];
  return lines.join('\n');
};

export const formatList = (l: BenchmarkList): string =>
  l.benchmarks.length
    ? [
        table(
          ['id', 'started', 'profile', '1-thread', 'all-core', 'burst', 'plan'],
          l.benchmarks.map((b) => [
            b.id,
            b.startedAt.slice(0, 19).replace('T', ' '),
            b.profile,
            num(b.singleThreadMops),
            num(b.allCoreMops),
            `${signed(b.burstPenaltyPercent)}%`,
            `${b.plan ?? '-'}${b.noisy ? ' [noisy]' : ''}`,
          ]),
          ['left', 'left', 'left', 'right', 'right', 'right'],
        ),
        `(${l.benchmarks.length} of ${l.total}; throughput in Mops/s, burst = penalty after the longest idle gap)`,
      ].join('\n')
    : 'No benchmark results yet; run one with `powerplan bench`.';
