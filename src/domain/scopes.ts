/** Access scopes: `control` implies `benchmark`, which implies `read`. */
import { z } from 'zod';

export const scopes = ['read', 'benchmark', 'control'] as const;
export const Scope = z.enum(scopes);
export type Scope = z.infer<typeof Scope>;

const rank: Record<Scope, number> = { read: 0, benchmark: 1, control: 2 };

export const grants = (held: readonly Scope[], needed: Scope): boolean =>
  held.some((s) => rank[s] >= rank[needed]);

export interface Caller {
  /** Token name, or `local` for an unauthenticated loopback / CLI caller. */
  name: string;
  scopes: readonly Scope[];
  remote?: string;
}

export const localCaller: Caller = { name: 'local', scopes: ['control'] };
