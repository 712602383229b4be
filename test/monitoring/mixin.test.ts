/**
 * The monitoring mixin of deploy/monitoring without a running Prometheus: promtool checks the rule
 * files and runs their unit tests (every alert firing and not firing), the alerts follow the
 * mixin conventions (CamelCase names with the PowerPlan prefix, a severity, summary, description
 * and a runbook_url whose section exists), the dashboard conforms to Grafana's published model
 * (@grafana/schema) and has what Grafana needs to import it with a datasource variable, and every
 * metric name the kit uses is one GET /metrics exposes.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { createApp } from '../../src/surfaces/http/app.ts';
import { run } from '../integrations/tools.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { hasPrometheus, PROMTOOL } from '../support/prometheus.ts';
import { dashboardTypeErrors } from './dashboard-schema.ts';
import {
  kitExpressions,
  loadDashboard,
  loadDashboardText,
  loadRules,
  metricNames,
  promtoolTests,
  recordedNames,
  ruleFiles,
  runbookFile,
  WORKLOAD_PROBE,
} from './kit.ts';

/** Grafana's reference to the data source chosen in the `datasource` variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a template
const VIA_VARIABLE = { type: 'prometheus', uid: '${datasource}' };

const noPromtool = hasPrometheus
  ? false
  : process.env.CI
    ? false // in CI .ci/run installs the package: a missing binary fails the test
    : 'promtool is not installed (apt-get install prometheus)';

describe('monitoring mixin: rules and alerts under promtool', { skip: noPromtool }, () => {
  it('promtool check rules accepts both files', async () => {
    const r = await run(PROMTOOL, ['check', 'rules', ...ruleFiles], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS: 15 rules found/);
    assert.match(r.stdout, /SUCCESS: 6 rules found/);
  });

  it('promtool test rules passes the unit tests', async () => {
    const r = await run(PROMTOOL, ['test', 'rules', promtoolTests], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS/);
  });
});

describe('monitoring mixin: conventions', () => {
  it('tests every alert both firing and not firing', async () => {
    const alerts = (await loadRules()).flatMap((r) => (r.alert ? [r.alert] : []));
    const doc = parse(await readFile(promtoolTests, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const cases = doc.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const a of alerts) {
      assert.ok(
        cases.some((c) => c.alertname === a && c.exp_alerts.length > 0),
        `${a} is tested firing`,
      );
      assert.ok(
        cases.some((c) => c.alertname === a && c.exp_alerts.length === 0),
        `${a} is tested not firing`,
      );
    }
  });

  it('names alerts PowerPlan<CamelCase> with severity, summary, description and a runbook section', async () => {
    const runbook = await readFile(runbookFile, 'utf8');
    const anchors = new Set([...runbook.matchAll(/^## (\S+)$/gm)].map((m) => m[1]!.toLowerCase()));
    const alerts = (await loadRules()).filter((r) => r.alert);
    assert.ok(alerts.length >= 5);
    for (const a of alerts) {
      assert.match(a.alert!, /^PowerPlan(?:[A-Z][a-z]+)+$/);
      assert.ok(['critical', 'warning', 'info'].includes(a.labels?.severity ?? ''), `${a.alert}: severity`);
      assert.ok(a.annotations?.summary && a.annotations.description, `${a.alert}: summary and description`);
      const anchor = /#([a-z]+)$/.exec(a.annotations.runbook_url ?? '')?.[1];
      assert.equal(anchor, a.alert!.toLowerCase(), `${a.alert}: runbook_url points at its section`);
      assert.ok(anchors.has(anchor), `${a.alert}: runbook.md has a section "## ${a.alert}"`);
    }
  });

  it('names recording rules level:metric:operations and uses only recorded series that exist', async () => {
    const rules = await loadRules();
    const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
    for (const name of recorded) assert.match(name, /^[a-z_]+:powerplan_[a-z_]+:[a-z0-9_]+$/);
    for (const { where, expr } of await kitExpressions())
      for (const name of recordedNames(expr)) assert.ok(recorded.has(name), `${where}: ${name} is recorded`);
  });
});

describe('monitoring mixin: the dashboard', () => {
  it("conforms to Grafana's dashboard and panel model (@grafana/schema), which a misspelt field fails", async () => {
    const text = await loadDashboardText();
    assert.deepEqual(dashboardTypeErrors(text), []);
    const broken = text
      .replace('"schemaVersion"', '"schemaVersoin"')
      .replace('"displayMode": "gradient"', '"displayMode": "gradual"');
    const errors = dashboardTypeErrors(broken).join('\n');
    assert.match(errors, /'"schemaVersoin"' does not exist/);
    assert.match(errors, /'"gradual"' is not assignable/);
  });

  it('has what Grafana needs to import it: uid, title, schemaVersion, a datasource variable every query uses', async () => {
    const d = await loadDashboard();
    assert.match(d.uid, /^[\w-]{1,40}$/);
    assert.ok(d.title);
    assert.ok(Number.isInteger(d.schemaVersion) && d.schemaVersion >= 36, 'a schemaVersion Grafana 9+ reads');
    const ds = d.templating.list.find((v) => v.type === 'datasource');
    assert.deepEqual({ name: ds?.name, query: ds?.query }, { name: 'datasource', query: 'prometheus' });
    const ids = new Set<number>();
    for (const p of d.panels) {
      assert.ok(!ids.has(p.id), `panel id ${p.id} is unique`);
      ids.add(p.id);
      assert.ok(p.gridPos.x + p.gridPos.w <= 24 && p.gridPos.h > 0, `${p.title}: fits the 24-column grid`);
      if (p.type === 'row') continue;
      assert.deepEqual(p.datasource, VIA_VARIABLE, `${p.title}: datasource`);
      assert.ok((p.targets ?? []).length > 0, `${p.title}: has a query`);
      const refIds = new Set((p.targets ?? []).map((t) => t.refId));
      assert.equal(refIds.size, p.targets?.length, `${p.title}: unique refIds`);
      for (const t of p.targets ?? [])
        assert.deepEqual(t.datasource, VIA_VARIABLE, `${p.title}: target datasource`);
    }
    for (const v of d.templating.list.filter((x) => x.type === 'query'))
      assert.deepEqual(v.datasource, VIA_VARIABLE, `variable ${v.name}`);
  });
});

describe('monitoring mixin: metric names against GET /metrics', () => {
  let t: TestDeps;
  before(async () => {
    t = await testDeps();
  });
  after(() => t?.cleanup());

  it('uses only metrics the service exposes (renaming one breaks this test)', async (ctx) => {
    const res = await createApp(t.deps).request('/metrics');
    assert.equal(res.status, 200);
    const exposed = new Set([...(await res.text()).matchAll(/^# TYPE (\w+) /gm)].map((m) => m[1]!));
    assert.ok(exposed.has('powerplan_active_plan_info'));
    const used = new Map<string, string>();
    for (const { where, expr } of await kitExpressions())
      for (const name of metricNames(expr)) used.set(name, where);
    assert.ok(used.size >= 15, `the kit uses ${used.size} metrics`);
    // The workload estimate's metrics come with get_workload_cost: a build without it exposes none
    // of them, and then the expressions on them are left out of this check, as the output says.
    const workload = exposed.has(WORKLOAD_PROBE);
    if (!workload)
      ctx.diagnostic(`no ${WORKLOAD_PROBE} in /metrics: the workload expressions are not checked`);
    const missing = [...used]
      .filter(([name]) => !exposed.has(name) && (workload || !name.startsWith('powerplan_workload_')))
      .map(([n, w]) => `${n} (${w})`);
    assert.deepEqual(missing, []);
  });
});
