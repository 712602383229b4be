/**
 * What the fleet's read operations share: the host selection as their input, the read scope, a
 * GET route and a CLI command of the same words (`fleet status`, `fleet hosts`, ...).
 */
import { z } from 'zod';
import { defineOperation, type OperationContext, type readOnly, type readOnlyFleet } from './define.ts';
import { fleetSelection } from './inputs.ts';

const selection = z.object(fleetSelection).strict();

export const defineFleetRead = <O extends z.ZodType>(op: {
  name: string;
  title: string;
  description: string;
  output: O;
  /** readOnlyFleet when it asks other hosts (the agents, Prometheus), readOnly when it contacts none. */
  annotations: typeof readOnly | typeof readOnlyFleet;
  /** The route below /v1/fleet/ and the words after `powerplan fleet`. */
  route: string;
  format?: (output: z.infer<O>) => string;
  handler: (input: z.infer<typeof selection>, ctx: OperationContext) => Promise<z.infer<O>>;
}) => {
  return defineOperation({
    name: op.name,
    title: op.title,
    description: op.description,
    input: selection,
    output: op.output,
    annotations: op.annotations,
    scope: 'read',
    http: { method: 'GET', path: `/v1/fleet/${op.route}` },
    cli: { command: ['fleet', op.route], ...(op.format ? { format: op.format } : {}) },
    handler: op.handler,
  });
};
