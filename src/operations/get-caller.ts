/**
 * get_caller: who the service takes the caller to be and what the caller may do, so that a client
 * (the status page) shows only the controls its token allows instead of failing on them.
 */
import { CallerView, describeCaller } from '../domain/scopes.ts';
import { defineOperation, readOnly } from './define.ts';
import { noInput } from './inputs.ts';

export const getCaller = defineOperation({
  name: 'get_caller',
  title: 'Who am I',
  description:
    'Returns the name the service knows the caller by (the token name, or `local`) and its scopes, including ' +
    'the ones they imply, so a client can offer only what the caller may do. Read-only; read scope.',
  input: noInput,
  output: CallerView,
  annotations: readOnly,
  scope: 'read',
  http: { method: 'GET', path: '/v1/whoami' },
  cli: {
    command: ['whoami'],
    format: (c) => `${c.name} (scopes: ${c.scopes.join(', ')}; allows: ${c.allows.join(', ')})`,
  },
  handler: async (_input, ctx) => describeCaller(ctx.caller),
});
