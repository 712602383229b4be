/**
 * The PromQL of the fleet status (docs/FLEET.md "The queries") and the label conventions of the
 * targets document (`fleet_tags` as `,sql,prod,`).
 */
import { FLEET_NAME } from '../../domain/fleet-file.ts';
import type { PrometheusTarget } from './file.ts';

/**
 * The search for unreachable hosts' last samples evaluates about this many points (hosts x steps
 * over the lookback): its step is as fine as that allows, 1 s at best (then the time is exact for
 * any scrape interval of a second or more).
 */
const LAST_SAMPLE_POINTS = 200_000;

const durationSeconds = (d: string): number => {
  const unit: Record<string, number> = {
    ms: 0.001,
    s: 1,
    m: 60,
    h: 3600,
    d: 86_400,
    w: 604_800,
    y: 31_536_000,
  };
  let total = 0;
  for (const m of d.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * unit[m[2]!]!;
  return total;
};

/** PromQL string literal of a fixed set of names, for `label=~"..."`. */
const anyOf = (names: string[]) => `"^(?:${names.map((n) => n.replaceAll('.', '\\\\.')).join('|')})$"`;

/**
 * The queries of the status, each aggregated to the host label (and the labels it reads). Only
 * what every host has is asked of every host (its scrape, plan, benchmark); a yes/no fact is asked
 * as the hosts where it departs from the usual value (`== 1`, `> 0`), so most answers are short.
 * Agents of this version expose every one of these metrics whenever their backend answers.
 */
export const statusQueries = (t: PrometheusTarget) => {
  const sel = t.selector;
  const H = t.hostLabel;
  const perHost = (expr: string) => `max by (${H}) (${expr})`;
  return {
    /** Hosts scraped now (within Prometheus' 5-minute lookback, not stale): tags, address, last scrape. */
    current: `max by (${H}, ${t.tagsLabel}, instance) (timestamp(up{${sel}}))`,
    /** Hosts scraped within the lookback but no longer. */
    gone: `max by (${H}, ${t.tagsLabel}, instance) (last_over_time(up{${sel}}[${t.lookback}]) unless up{${sel}})`,
    scrapeSeconds: perHost(`scrape_duration_seconds{${sel}}`),
    failing: `${perHost(`up{${sel}}`)} == 0`,
    notAgent: perHost(`up{${sel}} == 1 unless powerplan_backend_up{${sel}}`),
    backendDown: `${perHost(`powerplan_backend_up{${sel}}`)} == 0`,
    plan: `max by (${H}, id, name, kind, owner, edited) (powerplan_active_plan_info{${sel}})`,
    policyManaged: `${perHost(`powerplan_policy_managed{${sel}}`)} == 1`,
    notSettable: `${perHost(`powerplan_plan_settable{${sel}}`)} == 0`,
    holds: `${perHost(`powerplan_holds_active{${sel}}`)} > 0`,
    /** Hosts advised to switch, with the plan to switch to. */
    advised: `max by (${H}, id, name, kind) (powerplan_recommended_plan_info{${sel}} and ignoring (id, name, kind) powerplan_plan_change_recommended{${sel}} == 1)`,
    /** Hosts whose advice could not be worked out. */
    noAdvice: perHost(`powerplan_backend_up{${sel}} unless powerplan_plan_change_recommended{${sel}}`),
    desired: `max by (${H}, status) (powerplan_desired_plan_status{${sel}}) == 1`,
    /** Settings that did not take effect at the last switch (absent: not read back). */
    mismatches: perHost(`powerplan_plan_settings_not_in_force{${sel}}`),
    /** Who decides the processor clock and idle states. */
    controlledBy: `max by (${H}, decided_by) (powerplan_processor_control_info{${sel}})`,
    burst: `max by (${H}, gap_seconds) (powerplan_benchmark_burst_penalty_ratio{${sel}})`,
    /** What the plan costs each host's own work, the agent's estimate. */
    workloadCost: perHost(`powerplan_workload_added_ratio{${sel}}`),
    /** The newest sample of the agent's own series (stale-marked when a scrape fails), for `count` hosts. */
    lastSample: (count: number, hosts?: string[]) => {
      const step = Math.max(1, Math.ceil((durationSeconds(t.lookback) * count) / LAST_SAMPLE_POINTS));
      return perHost(
        `max_over_time(timestamp(powerplan_backend_up{${sel}${hosts ? `, ${H}=~${anyOf(hosts)}` : ''}})[${t.lookback}:${step}s])`,
      );
    },
  };
};

/** Tags from the tags label (`,sql,prod,`), only those a fleet tag may be. */
export const tagsOf = (text: string | undefined): string[] =>
  (text ?? '')
    .split(',')
    .filter((t) => FLEET_NAME.test(t))
    .sort();
