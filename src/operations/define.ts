/**
 * What an operation is: plain data plus a handler. Every surface (REST, MCP, OpenAPI, CLI) is
 * derived from a list of these; none is written by hand per operation.
 */
import type { z } from 'zod';
import type { Deps } from '../deps.ts';
import type { Caller, Scope } from '../domain/scopes.ts';

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

export interface OperationContext extends Deps {
  /** Aborted when the caller goes away (HTTP disconnect, MCP cancellation, Ctrl-C, shutdown). */
  signal: AbortSignal;
  caller: Caller;
  /** Reports progress of long operations; a no-op where the surface cannot show it. */
  progress: (p: Progress) => void;
}

export interface HttpBinding {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Hono-style path; `{name}` segments are filled from input fields of the same name. */
  path: string;
  /** Status on success (default 200). */
  status?: 200 | 201 | 202;
}

export interface CliBinding {
  /** Subcommand words, e.g. ['set'] or ['token', 'create']. */
  command: string[];
  /** Input fields taken from positional arguments, in order. */
  positional?: string[];
  /**
   * The description `--help` shows, where the shared one speaks of what the JSON answers; operation
   * names and input fields in it (and in the shared one) are put in CLI words by the CLI.
   */
  description?: string;
  /** Renders the output for a person; --json prints the output as REST returns it. */
  format?: (output: never) => string;
  /** The exit code for an output that is an answer but not a success (default 0), e.g. a fleet change that failed on a host. */
  exitCode?: (output: never) => number;
}

export interface Operation<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /**
   * What the tool can do, as MCP's hints say it: `readOnly` (changes nothing; exactly the GET
   * operations), `destructive` (can switch a plan, here or on other hosts), `idempotent` (a repeat
   * with the same input changes nothing more), `openWorld` (reaches hosts other than this one).
   */
  annotations: { readOnly: boolean; destructive: boolean; idempotent: boolean; openWorld: boolean };
  scope: Scope;
  http: HttpBinding;
  cli: CliBinding;
  /**
   * A paged answer (input `limit` and `cursor`, output `nextCursor` and `matched`): `items` names its
   * array of items. The CLI's --all follows nextCursor through every page (always, with `always`).
   */
  paged?: { items: string; always?: boolean };
  /** Needs a configured fleet: MCP lists it only when there is one. */
  fleet?: true;
  handler: (input: z.infer<I>, ctx: OperationContext) => Promise<z.infer<O>>;
}

/** The annotations of an operation that only reads, on this host. */
export const readOnly = { readOnly: true, destructive: false, idempotent: true, openWorld: false } as const;

/** The annotations of an operation that only reads, also from other hosts (the fleet's agents, its Prometheus). */
export const readOnlyFleet = { ...readOnly, openWorld: true } as const;

/** Keeps the input/output types of one operation tied together while storing it untyped. */
export const defineOperation = <I extends z.ZodObject, O extends z.ZodType>(
  op: Omit<Operation<I, O>, 'cli'> & {
    cli: Omit<CliBinding, 'format' | 'exitCode'> & {
      format?: (output: z.infer<O>) => string;
      exitCode?: (output: z.infer<O>) => number;
    };
  },
): Operation => op as unknown as Operation;
