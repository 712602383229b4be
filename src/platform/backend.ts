/**
 * The one interface every power backend implements (Windows powercfg, Linux tuned / PPD / sysfs,
 * the simulated stock Windows Server). Operations only talk to this; the choice of backend is made
 * in `detect.ts`. Optional capabilities are optional methods, announced in `capabilities()`.
 */
import type { Effective } from '../domain/idle.ts';
import type {
  ActivePlan,
  BackendName,
  Capabilities,
  Plan,
  PlanKind,
  PlanTemplate,
  PowerSource,
  Virtualization,
} from '../domain/schemas.ts';

/** Facts about the machine that only the backend can know (or knows best). */
export interface BackendFacts {
  virtualization: Virtualization;
  powerSource: PowerSource;
}

/** Plans that can be created when missing (Windows: duplicated from a hidden template). */
export type CreatableKind = Extract<PlanKind, 'ultimate-performance' | 'high-performance'>;

export interface PowerBackend {
  readonly name: BackendName;
  capabilities(): Promise<Capabilities>;
  /** All plans, in order of preference within a kind (the first of a kind answers a kind alias). */
  listPlans(): Promise<Plan[]>;
  /**
   * The plan in force, its effective processor settings, owner and whether it can be changed.
   * With `live`, the plan in force and its owner are read now, never answered from a reused read
   * (a periodic check that must see a change made behind its back at the next check).
   */
  getActive(options?: { live?: boolean }): Promise<ActivePlan>;
  /**
   * Make `planId` (an id from `listPlans`) active, then read back and throw `os_error` when the
   * system did not take it. Throws `forbidden` when rights are missing.
   */
  setActive(planId: string): Promise<void>;
  /** Create a missing well-known plan and return it (not activated). Only when capabilities.createPlan. */
  createPlan?(kind: CreatableKind): Promise<Plan>;
  /** The plans `createPlan` makes, each named by its template (what advice offers to create). */
  templates?(): PlanTemplate[];
  facts(): Promise<BackendFacts>;
  /**
   * Requested versus effective, after `planId` was made active: reads back the settings that plan
   * should have put in force (and any override of single settings) and lists what did not stick.
   */
  checkEffective?(planId: string): Promise<Effective>;
  /** Extra plan-id aliases this backend accepts (e.g. powercfg's SCHEME_MIN), mapped to plan ids. */
  aliases?(): Record<string, string>;
}
