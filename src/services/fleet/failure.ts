/**
 * Why one fleet host has no answer: the fleet status to report and the problem (title, detail).
 * Kept apart from the HTTP client so that the operations load node:http/https only when a fleet
 * call is made, not at every CLI start.
 */
import { errorMessage } from '../../domain/errors.ts';
import type { FleetError } from '../../domain/fleet.ts';

export type FailureStatus = 'unreachable' | 'unauthorized' | 'error';

/** Why a host has no answer; carries the fleet status and the problem to report. */
export class AgentFailure extends Error {
  readonly status: FailureStatus;
  readonly problem: FleetError;
  constructor(status: FailureStatus, problem: FleetError) {
    super(problem.detail);
    this.status = status;
    this.problem = problem;
  }
}

/** Anything thrown while asking a host, as the failure that host reports. */
export const asAgentFailure = (e: unknown): AgentFailure =>
  e instanceof AgentFailure ? e : new AgentFailure('error', { title: 'Failed', detail: errorMessage(e) });
