/**
 * The advice weighs both halves of what a plan costs (idle-state wake-up against the clock ramp)
 * and names the setting to change, per platform, with the commands; it explains an edited built-in
 * plan, a setting that did not take effect and a processor that firmware or the hypervisor controls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdviceInput } from '../../src/advice/input.ts';
import { recommend } from '../../src/advice/recommend.ts';
import type { BenchmarkResult } from '../../src/domain/benchmark.ts';
import type { IdleStates } from '../../src/domain/idle.ts';
import { benchmarkResult, win, windowsInput, windowsSettings } from './scenarios.ts';

/** A benchmark with the given wake-up cost per request and first-unit slowdown after the longest gap. */
const measured = (wakeUpUs: number, firstUnitRatio: number): BenchmarkResult => {
  const b = benchmarkResult(2);
  const longest = b.phases.burstsAfterIdle.at(-1)!;
  longest.firstUnitPenalty = { ...longest.firstUnitPenalty, median: firstUnitRatio };
  return { ...b, summary: { ...b.summary, wakeUpUs } };
};

const hpInput = (extra: Partial<AdviceInput> = {}): AdviceInput =>
  windowsInput([win.balanced, win.high], win.high.id, windowsSettings.performance(), extra);

/** The deepest idle state, C6, with the given exit latency. */
const deepest = (deepUs: number): IdleStates['states'][number] => ({
  index: 3,
  name: 'C6',
  description: null,
  exitLatencyUs: deepUs,
  targetResidencyUs: 600,
  disabled: false,
  usage: 1,
  timeUs: 4,
  timeShare: 0.8,
});

const linuxIdle = (deepUs: number): IdleStates => ({
  source: 'cpuidle',
  driver: 'intel_idle',
  governor: 'menu',
  cpus: 2,
  states: [
    {
      index: 0,
      name: 'POLL',
      description: null,
      exitLatencyUs: 0,
      targetResidencyUs: 0,
      disabled: false,
      usage: 1,
      timeUs: 1,
      timeShare: 0,
    },
    {
      index: 1,
      name: 'C1',
      description: null,
      exitLatencyUs: 2,
      targetResidencyUs: 2,
      disabled: false,
      usage: 1,
      timeUs: 1,
      timeShare: 0.2,
    },
    deepest(deepUs),
  ],
  deepestEnabled: deepest(deepUs),
  pmQos: { cpuDmaLatencyUs: 2_000_000_000, resumeLatencyUs: 0, limited: false },
  windows: null,
});

describe('advice: both halves', () => {
  it('idle states cost more: limit them (Windows IDLESTATEMAX / IDLEDISABLE on the plan in force)', () => {
    const r = recommend(hpInput({ benchmark: measured(180, 1.02) }));
    assert.equal(r.halves?.dominant, 'idle');
    assert.equal(r.halves?.wakeUpUs, 180);
    assert.equal(r.halves?.rampUs, 20);
    assert.match(r.halves?.text ?? '', /Idle states cost more than the clock/);
    const commands = r.halves?.settings.map((a) => a.command).join('\n') ?? '';
    assert.match(
      commands,
      new RegExp(
        `powercfg /setacvalueindex ${win.high.id} SUB_PROCESSOR 9943e905-9a30-4ec1-9b99-44dd3b76f7a2 1`,
      ),
    );
    assert.match(commands, /IDLEDISABLE 1/);
    assert.doesNotMatch(commands, /PROCTHROTTLEMIN/);
    assert.ok(r.reasons.some((x) => x.fact.name === 'wakeUpUs' && x.fact.value === 180));
  });

  it('the clock costs more: keep it up (minimum processor state, EPP)', () => {
    const r = recommend(
      windowsInput([win.balanced, win.high], win.balanced.id, windowsSettings.balanced(), {
        benchmark: measured(15, 1.4),
      }),
    );
    assert.equal(r.halves?.dominant, 'clock');
    assert.match(
      r.halves?.settings.map((a) => a.command).join('\n') ?? '',
      /PROCTHROTTLEMIN 100 .*PERFEPP 0/,
    );
  });

  it('on Linux without a benchmark, a deep C-state by its published latency: tuned latency profile or sysfs disable', () => {
    const input = hpInput();
    const r = recommend({
      ...input,
      system: { ...input.system, backend: 'linux' },
      active: { ...input.active, owner: 'tuned', idle: linuxIdle(170) },
    });
    assert.equal(r.halves?.dominant, 'idle');
    assert.equal(r.halves?.publishedExitLatencyUs, 170);
    const commands = r.halves?.settings.map((a) => a.command) ?? [];
    assert.ok(commands.includes('tuned-adm profile latency-performance'));
    assert.ok(
      commands.some((c) => c.includes('/cpuidle/state3/disable')),
      commands.join('\n'),
    );
    assert.ok(r.reasons.some((x) => /C6, whose published exit latency is 170 us/.test(x.text)));
  });

  it('a hypervisor in control: nothing here can change it, said with the evidence, and no setting offered', () => {
    const r = recommend(hpInput({}));
    const ctl = recommend({
      ...hpInput({ benchmark: measured(300, 1.5) }),
      active: {
        ...hpInput().active,
        control: {
          decidedBy: 'hypervisor',
          clockControl: false,
          idleControl: false,
          evidence: [
            {
              source: 'event 55 (group 0)',
              value: 0,
              text: 'no performance control (type 0) and 1 idle state(s)',
            },
          ],
        },
      },
    });
    assert.equal(
      r.reasons.some((x) => x.fact.name === 'control.decidedBy'),
      false,
    );
    const reason = ctl.reasons.find((x) => x.fact.name === 'control.decidedBy');
    assert.match(reason?.text ?? '', /nothing here can change the clock or the idle states \(event 55/);
    assert.ok(ctl.caveats.some((c) => c.kind === 'vm-host' && /event 55/.test(c.text)));
    assert.deepEqual(ctl.halves?.settings, []);
  });

  it('an edited built-in plan: named, with the stock value to restore', () => {
    const input = hpInput();
    const plan = {
      ...input.active.plan!,
      edited: true,
      differences: [{ setting: 'minStatePercent.ac', stock: 100, value: 5 }],
    };
    const r = recommend({ ...input, active: { ...input.active, plan } });
    assert.ok(r.reasons.some((x) => x.fact.name === 'edited.minStatePercent.ac' && x.fact.value === 5));
    assert.ok(r.caveats.some((c) => c.kind === 'edited-plan'));
    assert.ok(
      r.halves?.settings.some(
        (a) =>
          a.command ===
          `powercfg /setacvalueindex ${win.high.id} SUB_PROCESSOR PROCTHROTTLEMIN 100 && powercfg /setactive ${win.high.id}`,
      ),
    );
  });

  it('a setting that did not take effect at the last switch is explained', () => {
    const input = hpInput();
    const r = recommend({
      ...input,
      active: {
        ...input.active,
        effective: {
          checked: true,
          matches: false,
          settings: ['idleDisable.ac'],
          mismatches: [
            { setting: 'idleDisable.ac', wanted: 0, got: 1, cause: 'group policy pins this setting' },
          ],
        },
      },
    });
    assert.ok(
      r.reasons.some((x) => x.fact.name === 'mismatch.idleDisable.ac' && /group policy/.test(x.text)),
    );
    assert.ok(r.caveats.some((c) => c.kind === 'not-in-force'));
  });
});
