/**
 * Every PromQL expression of the monitoring kit (recording rules, alerts, dashboard panels and
 * variables) evaluated by a real Prometheus (Debian's package) that scrapes real agents every
 * second and runs the kit's rule files: each must return data. The fleet is made so that each
 * alert's condition is true somewhere: a Linux agent over a sysfs tree with idle states and
 * intel_pstate, a simulated Windows server that drifted from its desired plan and ran a benchmark,
 * one whose switch to Power saver left a setting not in force, one whose powercfg fails, and a
 * target with nothing listening. A misspelt metric or label name returns nothing and fails here.
 * The one alert whose condition cannot be met on a test machine (kit.ts) is asked for the data
 * below its threshold.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defaultSimulatedState } from '../../src/platform/simulated/simulated-state.ts';
import { type RunningServer, startHttpServer } from '../../src/surfaces/http/server.ts';
import { call } from '../support/call.ts';
import { repoRoot, type TestDeps, testDeps } from '../support/deps.ts';
import { hasPrometheus, type RunningPrometheus, startPrometheus } from '../support/prometheus.ts';
import { until } from '../support/until.ts';
import {
  CONDITION_NOT_REPRODUCIBLE,
  kitExpressions,
  ruleFiles,
  WORKLOAD_PROBE,
  withoutThreshold,
} from './kit.ts';

const skip = hasPrometheus
  ? false
  : process.env.CI
    ? false // in CI .ci/run installs the package: a missing binary fails the test
    : 'prometheus is not installed (apt-get install prometheus)';

const fixtures = join(repoRoot, 'test', 'fixtures');

/** A loopback port with nothing listening: a stopped agent. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** Grafana's variables, as the dashboard would set them. */
const substitute = (expr: string, instance: string) =>
  expr
    .replaceAll('$job', 'powerplan')
    .replaceAll('$instance', instance)
    .replaceAll('$__rate_interval', '15s');

describe('monitoring kit against a real Prometheus scraping agents', { skip }, () => {
  let dir: string;
  const agents: { t: TestDeps; server: RunningServer }[] = [];
  let prometheus: RunningPrometheus;
  let instances: string[];

  const agent = async (env: Record<string, string>, prepare?: (stateDir: string) => Promise<void>) => {
    const t = await testDeps({ POWERPLAN_PORT: '0', POWERPLAN_HOST: '127.0.0.1', ...env });
    await prepare?.(t.dir);
    const server = await startHttpServer(t.deps);
    agents.push({ t, server });
    return { t, instance: new URL(server.url).host };
  };

  const query = async (expr: string): Promise<unknown[]> => {
    const res = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { result: unknown[] } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data!.result;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-kit-'));
    // Linux: intel_pstate (a TLP machine's tree) with the idle states of an Intel server, C6 disabled.
    const sysfs = join(dir, 'sys');
    await cp(join(fixtures, 'linux-sysfs', 'tlp-derived-plasma-pstate31'), sysfs, { recursive: true });
    await cp(join(fixtures, 'linux-cpuidle', 'intel-idle-c6-disabled-cpupower-DERIVED'), sysfs, {
      recursive: true,
    });
    const linux = await agent({ POWERPLAN_BACKEND: 'linux', POWERPLAN_SYSFS_ROOT: sysfs });
    // Windows (simulated): desired Balanced, switched to High performance: drift; a benchmark.
    const drifted = await agent({});
    await call(drifted.t.deps, 'set_desired_power_plan', { plan: 'balanced' });
    await call(drifted.t.deps, 'set_power_plan', { plan: 'high-performance' });
    await call(drifted.t.deps, 'run_cpu_benchmark', { force: true, threads: 1, idleGapsMs: [50, 200] });
    // Windows (simulated): an option the system ignores, then a switch to Power saver (advised against).
    const fault = {
      nonSticky: {},
      policySettings: {},
      ignoredOptions: [{ option: 'min_pef_pct', wanted: '100' }],
    };
    const faulty = await agent({}, (stateDir) =>
      writeFile(
        join(stateDir, 'simulated-backend.json'),
        JSON.stringify({ ...defaultSimulatedState(), faults: fault }),
      ),
    );
    await call(faulty.t.deps, 'set_power_plan', { plan: 'power-saver' });
    await call(faulty.t.deps, 'set_power_plan', { plan: 'no-such-plan' }).catch(() => {});
    // Windows whose powercfg fails: the service answers, the backend does not.
    const broken = await agent({ POWERPLAN_BACKEND: 'windows', POWERPLAN_POWERCFG: '/bin/false' });
    const stopped = `127.0.0.1:${await closedPort()}`;
    instances = [linux.instance, drifted.instance, faulty.instance, broken.instance];

    prometheus = await startPrometheus(
      dir,
      [
        'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
        `rule_files: ${JSON.stringify(ruleFiles)}`,
        'scrape_configs:',
        '  - job_name: powerplan',
        `    static_configs: [{ targets: ${JSON.stringify([...instances, stopped])} }]`,
        '',
      ].join('\n'),
    );
  });
  after(async () => {
    await prometheus?.stop();
    for (const a of agents) {
      await a.server.close();
      await a.t.cleanup();
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('returns data for every expression of the rules, the alerts and the dashboard', async (ctx) => {
    // A build without the workload estimate exposes none of its metrics: its expressions are left out then.
    await until('a scrape of every agent', async () => (await query('up == 1')).length === instances.length);
    const workload = (await query(WORKLOAD_PROBE)).length > 0;
    if (!workload) ctx.diagnostic(`no ${WORKLOAD_PROBE} scraped: the workload expressions are not checked`);
    const expressions = (await kitExpressions())
      .filter((e) => workload || !e.expr.includes('powerplan_workload_'))
      .map((e) => (e.where in CONDITION_NOT_REPRODUCIBLE ? { ...e, expr: withoutThreshold(e.expr) } : e));
    assert.ok(expressions.length >= 40, `${expressions.length} expressions`);
    // An expression about one host ($instance) must return data for at least one of the hosts.
    const empty = async () => {
      const out: string[] = [];
      for (const { where, expr } of expressions) {
        const hosts = expr.includes('$instance') ? instances : [''];
        let found = false;
        for (const h of hosts) if ((await query(substitute(expr, h))).length > 0) found = true;
        if (!found) out.push(where);
      }
      return out;
    };
    let last: string[] = [];
    await until(
      'every expression returning data',
      async () => {
        last = await empty();
        return last.length === 0;
      },
      60_000,
      1000,
    ).catch(() => {});
    assert.deepEqual(last, [], `no data:\n${last.join('\n')}\n${prometheus.log().slice(-2000)}`);
  });

  it('has the alerts of the conditions made here pending or firing', async () => {
    // An alert group evaluates on its own schedule, after the recording rules it reads: the alert
    // becomes pending up to an evaluation (more on a loaded machine) after its expression has data.
    const wanted = [
      'PowerPlanNotRecommended',
      'PowerPlanDrift',
      'PowerPlanChangeNotEffective',
      'PowerPlanAgentDown',
      'PowerPlanBackendDown',
    ];
    let names = new Set<string>();
    await until(
      'every alert pending or firing',
      async () => {
        const r = (await query('ALERTS')) as { metric: Record<string, string> }[];
        names = new Set(r.flatMap((s) => s.metric.alertname ?? []));
        return wanted.every((a) => names.has(a));
      },
      30_000,
      500,
    ).catch(() => {});
    for (const a of wanted) assert.ok(names.has(a), `${a} is pending (seen: ${[...names].join(', ')})`);
  });
});
