/**
 * The caveats: what limits any advice on this system (a VM, group policy, missing rights,
 * firmware, battery), and what the advised plan costs (power and heat, battery, slower bursts).
 */
import type { AdviceCaveat, RecommendedPlan } from '../domain/advice.ts';
import type { Plan } from '../domain/schemas.ts';
import { type AdviceInput, isPerformanceWorkload } from './input.ts';
import type { Posture } from './settings.ts';
import { TEXT } from './texts.ts';

/** What limits any advice here, whatever it is. */
export const systemCaveats = ({ active, system }: AdviceInput): AdviceCaveat[] => [
  ...(system.virtualization.detected
    ? [{ kind: 'vm-host' as const, text: TEXT.caveat.vm(system.virtualization.kind) }]
    : []),
  ...(active.policyManaged ? [{ kind: 'group-policy' as const, text: TEXT.caveat.groupPolicy }] : []),
  ...(active.canSet ? [] : [{ kind: 'rights' as const, text: TEXT.caveat.rights(active.cannotSetReason) }]),
  ...(active.owner === 'firmware' ? [{ kind: 'firmware' as const, text: TEXT.caveat.firmwareOwns }] : []),
  ...(system.powerSource === 'battery' ? [{ kind: 'battery' as const, text: TEXT.caveat.onBattery }] : []),
];

const performanceCosts = ({ system }: AdviceInput): AdviceCaveat[] => [
  { kind: 'power-heat', text: TEXT.caveat.performanceCost },
  // On battery the system caveat already says so, more urgently.
  ...(system.powerSource === 'battery'
    ? []
    : [{ kind: 'battery' as const, text: TEXT.caveat.laptopBattery }]),
  // In a VM the host caveat already says who decides.
  ...(system.virtualization.detected ? [] : [{ kind: 'firmware' as const, text: TEXT.caveat.biosControl }]),
];

/** What the final advice costs: moving to `target`, or staying on a power-saving plan. */
export const costCaveats = (
  input: AdviceInput,
  target: RecommendedPlan | undefined,
  current: Plan,
  posture: Posture,
): AdviceCaveat[] => {
  const performance = isPerformanceWorkload(input);
  if (target && performance) return performanceCosts(input);
  if (target) return [{ kind: 'power-heat', text: TEXT.caveat.balancedCost }];
  if (!performance && posture === 'power-saving')
    return [{ kind: 'power-heat', text: TEXT.caveat.powerSaverCost(current) }];
  return [];
};
