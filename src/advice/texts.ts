/**
 * Every sentence the advice rules write (summaries, reasons, confidence reasons, caveats), in one
 * table, so that the wording can be read and changed in one place and the rules keep to logic.
 * The settings findings are worded in `settings.ts`, next to the setting each one reads.
 */
import type { NoiseVerdict, Workload } from '../domain/advice.ts';
import { gapText } from './measure.ts';

interface Named {
  name: string;
}
interface Shown extends Named {
  id: string;
}

/** What a compared difference's verdict adds to its range (one rule: measure.ts, `noiseVerdict`). */
const COMPARED_VERDICT: Record<NoiseVerdict, string> = {
  better: '',
  worse: '',
  'within-noise': ', within the noise',
  noisy: ', from a noisy run: not judged',
};

export const TEXT = {
  summary: {
    switchTo: (from: Named, to: Shown, w: Workload) =>
      `Switch from ${from.name} to ${to.name} (${to.id}) for the ${w} workload.`,
    createAndSwitch: (to: Named, w: Workload) =>
      `Create the ${to.name} plan (it is not installed here) and switch to it for the ${w} workload.`,
    noBetterPlan: (current: Named, w: Workload) =>
      `Nothing this service can change: no better plan than ${current.name} exists here for the ${w} workload.`,
    alreadySuits: (current: Named, w: Workload) =>
      `Nothing to change: ${current.name} already suits the ${w} workload.`,
    noFasterMeasured: (original: Named, w: Workload) =>
      `Nothing to change: no plan measured faster than ${original.name} for the ${w} workload beyond the noise.`,
    noPenaltyMeasured: (current: string, percent: number) =>
      `Nothing to change: ${current} showed almost no burst penalty on this machine (${percent}%), so a performance plan would gain little.`,
    noPlanVm:
      "Nothing to change here: this virtual machine exposes no power plan; the hypervisor host's power policy decides.",
    noPlanFirmware:
      'Nothing to change here: the firmware owns power management; change the BIOS power profile.',
    noPlan: 'Nothing to change here: this system exposes no power plan.',
  },

  confidence: {
    settingsDecide: 'The settings in force decide this; rules only.',
    kindOnly: 'Only the plan kind is known, not its settings; rules only.',
    heldBack: 'The settings in force hold the CPU back beyond doubt; rules only.',
    clockFalls:
      'The settings let the clock fall while idle, which slows bursts of work; not measured here (run a benchmark or compare_power_plans to confirm).',
    noBetterPlan: 'No better plan exists on this system and none can be created.',
    nothingToSwitch: 'There is nothing on this system to switch.',
    costMeasured: 'The settings call for a change and the comparison measured what it costs.',
    comparisonWon: (best: Named, original: Named) =>
      `Measured on this machine: ${best.name} beat ${original.name} beyond the spread of both runs.`,
    comparisonNoWinner:
      'Measured on this machine: no other plan beat the original beyond the noise; a longer (standard) comparison could still show a small difference.',
    benchmarkAgreesKeep: 'The settings and a benchmark under this plan agree.',
    penaltyPersists:
      'No better plan exists here, but the measurement shows a penalty the plan does not remove.',
    littlePenalty:
      'The settings suggest a performance plan, but the benchmark under the current plan found almost no penalty; compare_power_plans can measure both.',
    clearPenalty:
      'The settings and a benchmark under the current plan agree: bursts after idle pay a clear penalty.',
    smallPenalty: 'A benchmark under the current plan shows a small penalty.',
  },

  reason: {
    ultimateIsTop:
      'Ultimate Performance is already the most performance-oriented plan; High performance would be a step down',
    customActsAsPerformance: (plan: Named) =>
      `the custom plan ${plan.name} already behaves like a performance plan: its settings decide, not its name`,
    notInstalled: (target: Shown & { kind: string }) =>
      `no ${target.kind} plan is installed; it can be created from the Windows template ${target.id}`,
    noPlanOfKind: (performance: boolean) =>
      `no ${performance ? 'performance' : 'balanced'} plan exists here and this system cannot create one`,
    vmNoControls:
      "virtual machine: the host's policy decides the CPU clock; this guest exposes no power controls",
    firmwareOwns: 'the firmware owns power management; the OS exposes no plan',
    noPlanExposed: 'this system exposes no power plan',
    /** A comparison's figure for one candidate against the original. */
    compared: (
      metric: string,
      d: { percent: number; low: number; high: number; verdict: NoiseVerdict },
      candidate: Named,
      original: Named,
    ) =>
      `${metric} ran ${Math.abs(d.percent)}% ${d.percent >= 0 ? 'faster' : 'slower'} under ${candidate.name} than under ${original.name} (range ${d.low}..${d.high}%${COMPARED_VERDICT[d.verdict]})`,
    /** The rules pointed to a change that what was measured here does not bear out. */
    outweighed: (target: Named, basis: 'comparison' | 'benchmark') =>
      `the settings above point to ${target.name}, but the ${basis} on this machine outweighs them: it measured no gain worth the switch`,
    comparedGain: (metric: string, d: { percent: number; low: number; high: number }, best: Named) =>
      `${metric} ${d.percent}% faster (range ${d.low}..${d.high}%) under ${best.name}`,
    penalty: (gapMs: number, percent: number) =>
      `bursts after ${gapText(gapMs)} idle ran ${percent}% slower than warm`,
    penaltyUnderCurrent: (gapMs: number, percent: number) =>
      `bursts after ${gapText(gapMs)} idle ran ${percent}% slower than warm under the current plan`,
    penaltyHeldUp: (gapMs: number, percent: number) =>
      `bursts after ${gapText(gapMs)} idle ran only ${percent}% slower than warm: the plan holds the clock up`,
    penaltyPersists: (gapMs: number, percent: number) =>
      `bursts after ${gapText(gapMs)} idle still ran ${percent}% slower than warm under this performance plan`,
    penaltyLittle: (gapMs: number, percent: number) =>
      `bursts after ${gapText(gapMs)} idle ran only ${percent}% slower than warm: the current plan costs little on this machine`,
  },

  metric: {
    singleThread: 'sustained single-thread throughput',
    burstAfterIdle: (gapMs: number) => `bursts after ${gapText(gapMs)} idle`,
  },

  caveat: {
    vm: (kind: string | null) =>
      `This is a virtual machine (${kind ?? 'unknown hypervisor'}): the hypervisor host's power policy and BIOS decide the real clock; set the host to a performance plan as well, or the guest's plan changes little.`,
    groupPolicy:
      'Group policy sets the power plan here: a change made on this machine is reverted at the next policy refresh; change the policy instead.',
    rights: (reason: string | undefined) =>
      `This service cannot change the plan now: ${reason ?? 'not allowed here'}`,
    firmwareOwns:
      'The firmware owns power management here (e.g. pcc-cpufreq or BIOS-controlled P-states): change the BIOS power profile, not the OS plan.',
    onBattery:
      'This machine runs on battery now: a performance plan drains it much faster; plans keep separate values for battery (DC).',
    performanceCost:
      'A performance plan keeps the cores at a high clock also while they wait: more power draw and heat, which on a large server shows on the power bill.',
    laptopBattery:
      'On a laptop running on battery a performance plan drains it faster; the advice is for machines on mains power.',
    biosControl:
      "If the BIOS keeps power management to itself (not 'OS control'), the OS plan has less effect: set the BIOS power profile to OS control or maximum performance.",
    balancedCost:
      'A balanced plan saves power and heat while idle, at the cost of slower bursts of work after idle (response times may rise).',
    powerSaverCost: (current: Named) =>
      `${current.name} saves the most energy but caps or slows the CPU under load as well; Balanced saves almost as much while idle.`,
    noPerformanceProfile:
      'Without a performance profile the CPU clock is left to the firmware or the cpufreq driver: check the BIOS power profile and that a cpufreq driver (intel_pstate, amd-pstate) is loaded.',
    noisy: (id: string) =>
      `Benchmark ${id} was too noisy to rest advice on; run it again when the machine is quieter.`,
    penaltyFromHost:
      "The burst penalty persists under a performance plan: the hypervisor host's power policy causes it; change the host.",
    penaltyFromBios:
      "The burst penalty persists under a performance plan: the BIOS (C-states, 'energy efficient' profiles) causes it; check the firmware power settings.",
  },

  basis: {
    comparison: 'An A/B comparison of the plans, measured on this machine just now.',
    benchmark: (id: string) => `Benchmark ${id} under the active plan, plus the rules.`,
    rules: 'Rules over the settings only; nothing measured.',
  },
} as const;
