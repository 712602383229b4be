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
  if (caller.name === tokenlessCaller.name) advice = [advice, TOKENLESS_ADVICE].filter(Boolean).join(' ');
  throw new PowerPlanError(
    'forbidden',
    `${what} needs the '${needed}' scope; the caller '${caller.name}' does not have it.${advice ? ` ${advice}` : ''}`,
    { requiredScope: needed },
  );
};

/**
 * The caller of an operation run inside this process: the CLI, MCP over stdio, an in-process
 * request (tests, embedding). It acts with the rights of the OS user running the process (a state
 * directory or plan it cannot change, it cannot change), so the OS vouches for it.
 */
export const localCaller: Caller = { name: 'local', scopes: ['control'] };

/**
 * A caller over a socket without a token (the default mode's loopback caller): any local program
 * of any user can be that, so it may only read. Control needs a token, the control socket
 * (lib/control-socket.ts) or the local administrator credential (lib/admin-token.ts).
 */
export const tokenlessCaller: Caller = { name: 'local', scopes: ['read'] };

/** The local administrator: a caller on the control socket, or one that presented `<state dir>/admin.token`. */
export const adminCaller: Caller = { name: 'local-admin', scopes: ['control'] };

/** What a tokenless caller refused a scope is told to do instead. */
export const TOKENLESS_ADVICE =
  'No token was sent, and callers without a token may only read. On this host, call through the ' +
  "service's control socket as root or the service's user (curl --unix-socket /var/lib/powerplan/control/powerplan.sock " +
  'http://localhost/v1/...; on Windows the pipe \\\\.\\pipe\\powerplan from an elevated prompt), or run the powerplan CLI ' +
  'as root / from an elevated prompt; from elsewhere, use a token with that scope.';

/** The caller as get_caller answers it (named `Caller` in the OpenAPI document). */
export const CallerView = z
  .object({
    name: z
      .string()
      .describe(
        'Token name; `local-admin` for the local administrator credential; `local` for a caller without a token (read only over HTTP).',
      ),
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
