/**
 * get_caller: who the service takes the caller to be and what the caller may do, so that a client
 * (the status page) shows only the controls its token allows instead of failing on them.
 */
import { z } from 'zod';
import { grants, Scope, scopes } from '../domain/scopes.ts';
import { defineOperation, readOnly } from './define.ts';
import { noInput } from './inputs.ts';

export const Caller = z
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

export const getCaller = defineOperation({
  name: 'get_caller',
  title: 'Who am I',
  description:
    'Returns the name the service knows the caller by (the token name, or `local`) and its scopes, including ' +
    'the ones they imply, so a client can offer only what the caller may do. Read-only; read scope.',
  input: noInput,
  output: Caller,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/whoami' },
  cli: {
    command: ['whoami'],
    format: (c) => `${c.name} (scopes: ${c.scopes.join(', ')}; allows: ${c.allows.join(', ')})`,
  },
  handler: async (_input, ctx) => ({
    name: ctx.caller.name,
    scopes: [...ctx.caller.scopes],
    allows: scopes.filter((s) => grants(ctx.caller.scopes, s)),
  }),
});
