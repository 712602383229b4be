/**
 * Both halves of what a plan costs, weighed: the clock (a lowered clock ramping up after work
 * arrives, milliseconds) and the idle states (cores in deep C-states taking microseconds to wake).
 * From a benchmark, the wake-up probe's cost per request against the clock ramp's extra time for
 * the first unit of work after the longest gap; without one, the published exit latency of the
 * deepest allowed idle state. It names the setting to change on the side that costs more, per
 * platform, with the commands; and it explains what the plan's name hides: an edited built-in
 * plan, settings that did not take effect, and a processor that firmware or the hypervisor controls.
 */
import type { AdviceAction, AdviceCaveat, AdviceReason, CostHalves } from '../domain/advice.ts';
import type { ActivePlan, BackendName } from '../domain/schemas.ts';
import type { AdviceInput } from './input.ts';
import { fact } from './verdict.ts';

/** Below this (us per request) a half is not worth a setting. */
const NOTICEABLE_US = 20;
/** One half dominates when it costs this many times the other. */
const DOMINANCE = 2;
/** An idle state whose exit latency is above this (us) is "deep" for a latency-sensitive server. */
const DEEP_STATE_US = 50;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const round = (x: number) => Math.round(x * 10) / 10;

/** The wake-up cost per request and the clock ramp's extra time for the first unit after the longest gap (us). */
const measured = (input: AdviceInput): { wakeUpUs: number | null; rampUs: number | null } => {
  const b = input.benchmark;
  if (!b) return { wakeUpUs: null, rampUs: null };
  const longest = b.phases.burstsAfterIdle[b.phases.burstsAfterIdle.length - 1];
  const unitMs = b.phases.calibration.unitMs.value;
  const rampUs = longest ? Math.max(0, (longest.firstUnitPenalty.median - 1) * unitMs * 1000) : null;
  return { wakeUpUs: b.summary.wakeUpUs ?? null, rampUs: rampUs === null ? null : round(rampUs) };
};

const idleActions = (a: ActivePlan, backend: BackendName): AdviceAction[] => {
  const planId = a.plan?.id ?? '';
  if ((backend === 'windows' || backend === 'simulated') && GUID.test(planId)) {
    return [
      {
        via: 'powercfg',
        description:
          'Allow only the shallowest idle state (IDLESTATEMAX 1; the setting is hidden, so unhide it first), then re-apply the plan.',
        command: `powercfg -attributes SUB_PROCESSOR 9943e905-9a30-4ec1-9b99-44dd3b76f7a2 -ATTRIB_HIDE && powercfg /setacvalueindex ${planId} SUB_PROCESSOR 9943e905-9a30-4ec1-9b99-44dd3b76f7a2 1 && powercfg /setactive ${planId}`,
      },
      {
        via: 'powercfg',
        description:
          'Or disable idle states altogether (IDLEDISABLE 1): the lowest wake-up latency, the most power and heat.',
        command: `powercfg /setacvalueindex ${planId} SUB_PROCESSOR IDLEDISABLE 1 && powercfg /setactive ${planId}`,
      },
    ];
  }
  if (backend !== 'linux') return [];
  const deep = (a.idle?.states ?? []).filter((s) => !s.disabled && (s.exitLatencyUs ?? 0) > DEEP_STATE_US);
  const out: AdviceAction[] = [];
  if (a.owner === 'tuned') {
    out.push({
      via: 'tuned-adm',
      description:
        'A latency profile holds /dev/cpu_dma_latency low (force_latency), which forbids the deep idle states on every CPU.',
      command: 'tuned-adm profile latency-performance',
    });
  }
  if (deep.length) {
    out.push({
      via: 'sysfs',
      description: `Disable the deep idle state(s) ${deep.map((s) => `${s.name} (${s.exitLatencyUs} us)`).join(', ')} on every CPU (root; lost at reboot: put it in a tuned profile or a unit).`,
      command: deep
        .map(
          (s) =>
            `for f in /sys/devices/system/cpu/cpu*/cpuidle/state${s.index}/disable; do echo 1 > "$f"; done`,
        )
        .join('; '),
    });
  }
  return out;
};

const clockActions = (a: ActivePlan, backend: BackendName): AdviceAction[] => {
  const planId = a.plan?.id ?? '';
  if ((backend === 'windows' || backend === 'simulated') && GUID.test(planId)) {
    return [
      {
        via: 'powercfg',
        description:
          'Keep the clock up while idle: minimum processor state 100% and EPP 0 (performance) on mains.',
        command: `powercfg /setacvalueindex ${planId} SUB_PROCESSOR PROCTHROTTLEMIN 100 && powercfg /setacvalueindex ${planId} SUB_PROCESSOR PERFEPP 0 && powercfg /setactive ${planId}`,
      },
    ];
  }
  if (backend !== 'linux') return [];
  if (a.owner === 'tuned')
    return [
      {
        via: 'tuned-adm',
        description: 'A profile that keeps the clock up.',
        command: 'tuned-adm profile throughput-performance',
      },
    ];
  if (a.processor.energyPreference !== null)
    return [
      {
        via: 'sysfs',
        description: 'Energy performance preference `performance` on every CPU (root).',
        command:
          'for f in /sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference; do echo performance > "$f"; done',
      },
    ];
  if (a.processor.governor !== null)
    return [
      {
        via: 'sysfs',
        description: 'The performance governor on every CPU (root).',
        command:
          'for f in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; do echo performance > "$f"; done',
      },
    ];
  return [];
};

/** The setting to restore on an edited built-in plan (Windows GUIDs and aliases only). */
const restoreActions = (a: ActivePlan): AdviceAction[] => {
  const plan = a.plan;
  if (!plan?.edited || !GUID.test(plan.id)) return [];
  const alias: Record<string, string> = {
    'minStatePercent.ac': 'PROCTHROTTLEMIN',
    'maxStatePercent.ac': 'PROCTHROTTLEMAX',
    'idleDisable.ac': 'IDLEDISABLE',
  };
  return (plan.differences ?? []).flatMap((d) =>
    alias[d.setting] && typeof d.stock === 'number'
      ? [
          {
            via: 'powercfg' as const,
            description: `Restore ${d.setting} of ${plan.name} to its stock ${d.stock} (it is ${d.value}).`,
            command: `powercfg /setacvalueindex ${plan.id} SUB_PROCESSOR ${alias[d.setting]} ${d.stock} && powercfg /setactive ${plan.id}`,
          },
        ]
      : [],
  );
};

export interface HalvesPart {
  halves: CostHalves;
  reasons: AdviceReason[];
  caveats: AdviceCaveat[];
  /** True when the processor is controlled by firmware or the hypervisor: nothing here changes it. */
  uncontrollable: boolean;
}

export const weighHalves = (input: AdviceInput): HalvesPart => {
  const { active, system, workload } = input;
  const reasons: AdviceReason[] = [];
  const caveats: AdviceCaveat[] = [];
  const { wakeUpUs, rampUs } = measured(input);
  const deepest = active.idle?.deepestEnabled ?? null;
  const publishedUs = deepest?.exitLatencyUs ?? null;
  const idleUs = wakeUpUs ?? publishedUs;

  let dominant: CostHalves['dominant'] = 'unknown';
  if (idleUs !== null && rampUs !== null) {
    const idleBig = idleUs >= NOTICEABLE_US;
    const rampBig = rampUs >= NOTICEABLE_US;
    dominant =
      !idleBig && !rampBig
        ? 'neither'
        : idleUs >= DOMINANCE * rampUs
          ? 'idle'
          : rampUs >= DOMINANCE * idleUs
            ? 'clock'
            : 'both';
  } else if (idleUs !== null) {
    dominant = idleUs > DEEP_STATE_US ? 'idle' : 'unknown';
  }

  if (wakeUpUs !== null) {
    reasons.push(
      fact(
        'wakeUpUs',
        wakeUpUs,
        `waking from idle costs about ${wakeUpUs} us per request (timer overshoot plus a slower first unit, median over 0.1-10 ms gaps)`,
      ),
    );
  }
  if (rampUs !== null) {
    reasons.push(
      fact(
        'rampUs',
        rampUs,
        `the clock ramp adds about ${rampUs} us to the first 1 ms of work after a long idle gap`,
      ),
    );
  }
  if (publishedUs !== null && publishedUs > DEEP_STATE_US) {
    reasons.push(
      fact(
        'idle.deepestEnabled.exitLatencyUs',
        publishedUs,
        `idle cores may sleep in ${deepest?.name}, whose published exit latency is ${publishedUs} us`,
      ),
    );
  }

  const control = active.control;
  const uncontrollable = control?.decidedBy === 'firmware' || control?.decidedBy === 'hypervisor';
  if (control && uncontrollable) {
    const evidence = control.evidence.map((e) => `${e.source}: ${e.text}`).join('; ');
    reasons.push(
      fact(
        'control.decidedBy',
        control.decidedBy,
        `the ${control.decidedBy} controls the processor here, so nothing here can change the clock${control.idleControl === false ? ' or the idle states' : ''} (${evidence})`,
      ),
    );
    caveats.push({
      kind: control.decidedBy === 'hypervisor' ? 'vm-host' : 'firmware',
      text: `Nothing set here changes what the ${control.decidedBy} decides; change the ${control.decidedBy === 'hypervisor' ? "host's power policy" : 'firmware (BIOS) power management setting'} instead. Evidence: ${evidence}.`,
    });
  }

  const plan = active.plan;
  for (const d of plan?.edited ? (plan.differences ?? []) : []) {
    reasons.push(
      fact(
        `edited.${d.setting}`,
        d.value,
        `${plan?.name} is a built-in plan but was edited: ${d.setting} is ${d.value} where the stock plan has ${d.stock}`,
      ),
    );
    caveats.push({
      kind: 'edited-plan',
      text: `${plan?.name} does not do what its id promises: restore ${d.setting} to ${d.stock}.`,
    });
  }
  for (const m of active.effective?.mismatches ?? []) {
    reasons.push(
      fact(
        `mismatch.${m.setting}`,
        m.got,
        `${m.setting} did not take effect at the last switch (wanted ${m.wanted}, got ${m.got ?? 'not applied'}): ${m.cause}`,
      ),
    );
    caveats.push({ kind: 'not-in-force', text: `${m.setting} is not as the plan asks: ${m.cause}` });
  }

  const performance = workload !== 'energy-saving';
  const settings = uncontrollable
    ? []
    : [
        ...restoreActions(active),
        ...(performance && (dominant === 'idle' || dominant === 'both')
          ? idleActions(active, system.backend)
          : []),
        ...(performance && (dominant === 'clock' || dominant === 'both')
          ? clockActions(active, system.backend)
          : []),
      ];
  const text =
    dominant === 'idle'
      ? `Idle states cost more than the clock here (${idleUs} us per wake-up${rampUs !== null ? ` against ${rampUs} us of ramp` : ''}): limit the idle states rather than the clock.`
      : dominant === 'clock'
        ? `The clock costs more than the idle states here (${rampUs} us of ramp against ${idleUs} us per wake-up): keep the clock up (minimum processor state, EPP).`
        : dominant === 'both'
          ? `Both halves cost about the same (${idleUs} us per wake-up, ${rampUs} us of ramp): a performance plan and shallower idle states both help.`
          : dominant === 'neither'
            ? `Neither half costs much here (${idleUs} us per wake-up, ${rampUs} us of ramp).`
            : 'Not enough measured to weigh the two halves; run a benchmark (it measures both).';
  return {
    halves: { wakeUpUs, rampUs, publishedExitLatencyUs: publishedUs, dominant, text, settings },
    reasons,
    caveats,
    uncontrollable,
  };
};
