/**
 * What the fleet's read operations share: the host selection (and their own filters and page) as
 * their input, the read scope, a GET route and a CLI command of the same words (`fleet status`,
 * `fleet hosts`, ...), a paged answer.
 */
import { z } from 'zod';
import { defineOperation, type OperationContext, type readOnly, type readOnlyFleet } from './define.ts';
import { fleetSelection } from './inputs.ts';

export const defineFleetRead = <O extends z.ZodType, F extends z.ZodRawShape>(op: {
  name: string;
  title: string;
  description: string;
  /** Input fields beside the selection: filters, the page. */
  fields: F;
  output: O;
  /** readOnlyFleet when it asks other hosts (the agents, Prometheus), readOnly when it contacts none. */
  annotations: typeof readOnly | typeof readOnlyFleet;
  /** The route below /v1/fleet/ and the words after `powerplan fleet`. */
  route: string;
  format?: (output: z.infer<O>) => string;
  /** The array of the answer's items (default `hosts`). */
  items?: string;
  /** The CLI prints every page, --all or not (a document that must be whole). */
  allPages?: boolean;
  handler: (
    input: z.infer<z.ZodObject<typeof fleetSelection & F>>,
    ctx: OperationContext,
  ) => Promise<z.infer<O>>;
}) => {
  const input: z.ZodObject = z.object({ ...fleetSelection, ...op.fields }).strict();
  return defineOperation({
    name: op.name,
    title: op.title,
    description: op.description,
    input,
    output: op.output,
    annotations: op.annotations,
    scope: 'read',
    http: { method: 'GET', path: `/v1/fleet/${op.route}` },
    cli: { command: ['fleet', op.route], ...(op.format ? { format: op.format } : {}) },
    paged: { items: op.items ?? 'hosts', ...(op.allPages ? { always: true } : {}) },
    fleet: true,
    handler: op.handler as (input: unknown, ctx: OperationContext) => Promise<z.infer<O>>,
  });
};
