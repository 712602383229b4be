/** Access scopes: `control` implies `benchmark`, which implies `read`. */
import { z } from 'zod';
import { PowerPlanError } from './errors.ts';

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

/**
 * Refuses a caller without the scope `needed` for `what` (an operation, a route, an option), with
 * `advice` on what the caller can do instead.
 */
export const requireScope = (caller: Caller, needed: Scope, what: string, advice = ''): void => {
  if (grants(caller.scopes, needed)) return;
  throw new PowerPlanError(
    'forbidden',
    `${what} needs the '${needed}' scope; the caller '${caller.name}' does not have it.${advice ? ` ${advice}` : ''}`,
    { requiredScope: needed },
  );
};

export const localCaller: Caller = { name: 'local', scopes: ['control'] };

/** The caller as get_caller answers it (named `Caller` in the OpenAPI document). */
export const CallerView = z
  .object({
    name: z
      .string()
      .describe('Token name, or `local` for a loopback caller of a service without a token file.'),
    scopes: z.array(Scope).describe('The scopes the caller holds, as granted.'),
    allows: z
      .array(Scope)
      .describe(
        'Every scope the caller may use, implied ones included (`control` implies `benchmark` and `read`).',
      ),
  })
  .meta({ id: 'Caller', description: 'The caller as the service sees it.' });
export type CallerView = z.infer<typeof CallerView>;

export const describeCaller = (caller: Caller): CallerView => ({
  name: caller.name,
  scopes: [...caller.scopes],
  allows: scopes.filter((s) => grants(caller.scopes, s)),
});
