/**
 * Where set_power_plan is reached over REST and from the CLI. The operation declares its bindings
 * from this, and the advice builds its "how to apply" actions from the same data, so the two cannot
 * drift apart. It lives here, below both, because the advice must not import the operations.
 */
export const setPlanRoute = {
  http: { method: 'PUT' as const, path: '/v1/plans/active' },
  /** `positional[0]` is the input field naming the plan, in the REST body as on the command line. */
  cli: { command: ['set'], positional: ['plan'] },
};
