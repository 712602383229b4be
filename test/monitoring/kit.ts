/**
 * The monitoring kit of deploy/monitoring as the tests see it: the rule files parsed, every PromQL
 * expression of the rules, the alerts and the dashboard (panel targets and template variables),
 * and the metric names they use.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../support/deps.ts';

export const kitDir = join(repoRoot, 'deploy', 'monitoring');
export const ruleFiles = [
  join(kitDir, 'rules', 'powerplan-rules.yaml'),
  join(kitDir, 'alerts', 'powerplan-alerts.yaml'),
];
export const dashboardFile = join(kitDir, 'dashboards', 'powerplan.json');
export const runbookFile = join(kitDir, 'runbook.md');
export const promtoolTests = join(kitDir, 'tests.yaml');

/** A metric of the workload estimate (get_workload_cost): present when the build has it. */
export const WORKLOAD_PROBE = 'powerplan_workload_estimated';

/**
 * Alerts whose condition no test machine can be made to meet, with why: for these the live test
 * asks for data from the expression without its threshold (the series and labels it reads).
 */
export const CONDITION_NOT_REPRODUCIBLE: Record<string, string> = {
  'alert PowerPlanWorkloadCostHigh':
    'the plan must add over 5% to real CPU work: a busy test machine measures ~0% (its cores never idle long)',
};

/** An alert's expression without its final threshold comparison (`... > 0.05`). */
export const withoutThreshold = (expr: string): string =>
  expr.replace(/\s*(?:>|<|>=|<=|==|!=)\s*[\d.]+\s*$/, '');

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export const loadRules = async (): Promise<Rule[]> => {
  const rules: Rule[] = [];
  for (const file of ruleFiles) {
    const doc = parse(await readFile(file, 'utf8')) as { groups: { rules: Rule[] }[] };
    for (const g of doc.groups) rules.push(...g.rules);
  }
  return rules;
};

export interface DashboardTarget {
  expr: string;
  refId: string;
  datasource?: { type?: string; uid?: string };
}
export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type?: string; uid?: string };
  targets?: DashboardTarget[];
}
export interface DashboardVariable {
  name: string;
  type: string;
  query: string | { query: string };
  datasource?: { type?: string; uid?: string };
}
export interface DashboardJson {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: DashboardPanel[];
  templating: { list: DashboardVariable[] };
}

export const loadDashboardText = () => readFile(dashboardFile, 'utf8');
export const loadDashboard = async (): Promise<DashboardJson> =>
  JSON.parse(await loadDashboardText()) as DashboardJson;

/** A PromQL expression of the kit and where it is, for a failing assertion. */
export interface KitExpression {
  where: string;
  expr: string;
}

/** `label_values(selector, label)` of a template variable as the query Grafana sends for it. */
const variableQuery = (query: string): string => {
  const m = /^label_values\((.+),\s*(\w+)\)$/.exec(query.trim());
  return m ? `count by (${m[2]}) (${m[1]})` : query;
};

export const kitExpressions = async (): Promise<KitExpression[]> => {
  const out: KitExpression[] = [];
  for (const r of await loadRules())
    out.push({ where: r.alert ? `alert ${r.alert}` : `rule ${r.record}`, expr: r.expr.trim() });
  const d = await loadDashboard();
  for (const p of d.panels)
    for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr });
  for (const v of d.templating.list)
    if (v.type === 'query')
      out.push({
        where: `variable ${v.name}`,
        expr: variableQuery(typeof v.query === 'string' ? v.query : v.query.query),
      });
  return out;
};

/** The exporter's metric names an expression uses (recording rules' level:metric:op names excluded). */
export const metricNames = (expr: string): string[] => [
  ...new Set(expr.match(/(?<![\w:])(?:powerplan|process|nodejs)_\w+(?![\w:])/g) ?? []),
];

/** The recording-rule names an expression uses (level:metric:operations). */
export const recordedNames = (expr: string): string[] => [
  ...new Set(expr.match(/(?<![\w:])[a-z_]+:powerplan_\w+:\w+/g) ?? []),
];
