/**
 * The verdict the advice builds: the rules give a first one, the evidence and the caveats add
 * parts. A part is data; `merge` makes a new verdict from it (lists are appended, the other fields
 * given replace the earlier ones), so no step changes what another step returned.
 */
import type {
  AdviceCaveat,
  AdviceReason,
  Confidence,
  ExpectedGain,
  RecommendedPlan,
} from '../domain/advice.ts';

export interface Verdict {
  /** The plan to move to; undefined: stay on the plan in force. */
  target: RecommendedPlan | undefined;
  confidence: Confidence;
  confidenceReason: string;
  reasons: AdviceReason[];
  caveats: AdviceCaveat[];
  gains: ExpectedGain[];
  /** A summary worded by the evidence itself (a measured "nothing to change"). */
  summary?: string;
}

/** Part of a verdict; a `target` key that is present but undefined means "stay". */
export type Part = Partial<Verdict>;

export const merge = (v: Verdict, p: Part): Verdict => ({
  ...v,
  ...p,
  reasons: [...v.reasons, ...(p.reasons ?? [])],
  caveats: [...v.caveats, ...(p.caveats ?? [])],
  gains: [...v.gains, ...(p.gains ?? [])],
});

/** A reason with the fact it rests on. */
export const fact = (name: string, value: string | number | boolean | null, text: string): AdviceReason => ({
  text,
  fact: { name, value },
});
