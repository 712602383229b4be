/**
 * Why one fleet host has no answer: the fleet status to report and the problem (title, detail).
 * Kept apart from the HTTP client so that the operations load node:http/https only when a fleet
 * call is made, not at every CLI start.
 */
import { errorMessage } from '../../domain/errors.ts';
import type { FleetError } from '../../domain/fleet.ts';
import { cleanText } from '../../lib/untrusted-text.ts';

export type FailureStatus = 'unreachable' | 'unauthorized' | 'error';

/**
 * Why a host has no answer; carries the fleet status and the problem to report. Its text is
 * cleaned here, whoever wrote it (a TLS error quotes the agent's certificate, a problem is the
 * agent's own); `byAgent` says the title and detail are the agent's words.
 */
export class AgentFailure extends Error {
  readonly status: FailureStatus;
  readonly problem: FleetError;
  readonly byAgent: boolean;
  constructor(status: FailureStatus, problem: FleetError, byAgent = false) {
    const clean = { ...problem, title: cleanText(problem.title), detail: cleanText(problem.detail) };
    super(clean.detail);
    this.status = status;
    this.problem = clean;
    this.byAgent = byAgent;
  }

  /** The host's `reportedByAgent` for this failure. */
  get reportedByAgent(): string[] {
    return this.byAgent ? ['/error/title', '/error/detail'] : [];
  }
}

/** Anything thrown while asking a host, as the failure that host reports. */
export const asAgentFailure = (e: unknown): AgentFailure =>
  e instanceof AgentFailure ? e : new AgentFailure('error', { title: 'Failed', detail: errorMessage(e) });
