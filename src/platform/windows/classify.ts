/**
 * What kind of plan a Windows power scheme is, never from its (localized, renamable) name:
 * 1. a well-known scheme GUID (the four Windows schemes and the ConfigMgr High performance);
 * 2. a scheme this service created from a well-known template (by the fixed GUID it gave it);
 * 3. the scheme personality setting, which is how Windows itself classifies a custom or duplicated
 *    scheme (0 power saver, 1 high performance, 2 balanced) and which a copy keeps;
 * 4. when the personality cannot be read (Windows without `/qh`, where it is hidden): a minimum
 *    processor state of 100% on mains is what makes a plan "high performance" for the workloads
 *    this service is about;
 * 5. otherwise `custom`.
 * A copy of Ultimate Performance carries personality 1 like High performance and the processor
 * settings read here (minimum 100%, boost, EPP) do not tell the two apart, so after a restart such
 * a copy is reported as `high-performance` (kindSource `personality`), never guessed to be more.
 */
import type { Plan, PlanKind } from '../../domain/schemas.ts';
import { CREATED_SCHEME, personalityKinds, SCHEME, wellKnownKinds } from './well-known.ts';

export type KindSource = NonNullable<Plan['kindSource']>;

export interface Classification {
  kind: PlanKind;
  kindSource: KindSource;
  builtin: boolean;
}

export interface ClassifyInput {
  id: string;
  /** The scheme's personality value, null when unreadable. */
  personality: number | null;
  /** Minimum processor state on mains power in %, null when unreadable. */
  minStateAc: number | null;
}

/** True when the scheme's kind follows from its GUID alone (no settings need to be read). */
export const isWellKnown = (id: string): boolean => id in wellKnownKinds || id in createdKinds;

const createdKinds: Readonly<Record<string, PlanKind>> = Object.fromEntries(
  Object.entries(CREATED_SCHEME).map(([kind, guid]) => [guid, kind as PlanKind]),
);

export const classifyScheme = ({ id, personality, minStateAc }: ClassifyInput): Classification => {
  const known = wellKnownKinds[id];
  if (known)
    return { kind: known, kindSource: 'well-known-id', builtin: id !== SCHEME.configMgrHighPerformance };
  const createdAs = createdKinds[id];
  if (createdAs) return { kind: createdAs, kindSource: 'well-known-id', builtin: false };
  const byPersonality = personality === null ? undefined : personalityKinds[personality];
  if (byPersonality) return { kind: byPersonality, kindSource: 'personality', builtin: false };
  if (minStateAc !== null && minStateAc >= 100) {
    return { kind: 'high-performance', kindSource: 'settings', builtin: false };
  }
  return { kind: 'custom', kindSource: 'default', builtin: false };
};
