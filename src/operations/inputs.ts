/**
 * Input fields shared by several operations: the plan reference, free text without control
 * characters, the benchmark knobs, the fleet host selection, and the empty input.
 */
import { z } from 'zod';
import { MAX_THREADS } from '../bench/service.ts';
import { BenchmarkProfile } from '../domain/benchmark.ts';
import { FleetHostReachability } from '../domain/fleet.ts';
import { FleetHostName, FleetTag } from '../domain/fleet-file.ts';
import { parseDuration } from '../domain/holds.ts';
import { PlanKind } from '../domain/schemas.ts';

/** The input of an operation that takes none (unknown fields are still refused). */
export const noInput = z.object({}).strict();

/** How many items an answer lists: 1 to `max`, `fallback` when not given. */
export const limitInput = (max: number, fallback: number, text: string) =>
  z.number().int().min(1).max(max).default(fallback).describe(text);

const isoTime = z.iso.datetime({ offset: true });

/**
 * A point in time: an ISO 8601 time with its offset (2025-01-31T00:00:00Z), or a duration ago as a
 * hold takes it (90s, 45m, 1h, 2d, 1h30m); the handler receives the ISO time either way.
 */
export const sinceInput = (text: string) =>
  z
    .string()
    .max(64)
    .refine(
      (v) => isoTime.safeParse(v).success || parseDuration(v) !== undefined,
      'must be an ISO 8601 time such as 2025-01-31T00:00:00Z, or a duration ago such as 1h, 30m or 2d',
    )
    .transform((v) => {
      const seconds = isoTime.safeParse(v).success ? undefined : parseDuration(v);
      return seconds === undefined ? v : new Date(Date.now() - seconds * 1000).toISOString();
    })
    .describe(text);

/** A non-empty line of text that cannot smuggle a newline or escape into logs, audit or a terminal. */
export const plainText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters');

export const PlanRef = plainText(256).describe(
  'The plan: its id (Windows GUID, tuned/PPD profile or governor name), a kind alias (high-performance, ' +
    'ultimate-performance, balanced, power-saver), a powercfg alias (SCHEME_MIN, SCHEME_MAX, SCHEME_BALANCED) ' +
    'or the exact plan name (case-insensitive).',
);

/** What a benchmark run can be asked for; comparisons take the same fields for each plan. */
export const benchmarkInput = z
  .object({
    profile: BenchmarkProfile.default('quick').describe(
      '`quick` (default, about 5 s) or `standard` (about 20 s, more idle gaps and repetitions).',
    ),
    threads: z
      .number()
      .int()
      .min(1)
      .max(MAX_THREADS)
      .optional()
      .describe(`Threads of the all-core phase, 1 to ${MAX_THREADS}; default: the number of logical CPUs.`),
    force: z
      .boolean()
      .default(false)
      .describe('Run even when the CPU is already busy (the busy guard refuses above 30% average busy).'),
    idleGapsMs: z
      .array(z.number().int().min(0).max(5000))
      .min(1)
      .max(12)
      .optional()
      .describe("Replace the profile's idle gaps (ms, each 0 to 5000, at most 12), e.g. [50, 200, 1000]."),
    repetitions: z
      .number()
      .int()
      .min(1)
      .max(15)
      .optional()
      .describe(
        "How many times the idle gap ladder runs, 1 to 15 (default: the profile's, 2 for quick and 3 for standard): " +
          'more gives steadier losses (a mean over more bursts) and takes about the sum of the gaps plus 60 ms a gap longer each time.',
      ),
  })
  .strict();

/** The host selection shared by the fleet operations: names and tags. */
export const fleetSelection = {
  hosts: z
    .array(FleetHostName)
    .max(10_000)
    .optional()
    .describe(
      'Only these hosts, by their fleet names (CLI: --hosts db1,db2). Every name must be in the fleet.',
    ),
  tags: z
    .array(FleetTag)
    .max(64)
    .optional()
    .describe('Only hosts with any of these tags (CLI: --tags sql). With hosts, a host must match both.'),
};

/** The fields of a paged answer's input: how many items at most, and where to go on from. */
export const pageInput = (what: string, fallback: number, max: number) => ({
  limit: limitInput(
    max,
    fallback,
    `${what} per page, 1 to ${max} (default ${fallback}); a page also ends at about 40 KB (CLI: --all for every page).`,
  ),
  cursor: z
    .string()
    .max(1024)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be the nextCursor of a page, unchanged')
    .optional()
    .describe('The nextCursor of the page before, to go on from there (with the same filters).'),
});

/** The filters of the fleet status' page (the counts stay over every host asked). */
export const fleetStatusFilters = {
  status: z
    .array(FleetHostReachability)
    .max(4)
    .optional()
    .describe('Only hosts with any of these statuses (CLI: --status unreachable,error).'),
  kind: z
    .array(PlanKind)
    .max(5)
    .optional()
    .describe('Only hosts whose plan in force is of any of these kinds (CLI: --kind balanced,power-saver).'),
  switchRecommended: z
    .boolean()
    .optional()
    .describe('true: only hosts advised to switch plans; false: only hosts that are not.'),
};
