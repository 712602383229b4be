import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TOO_LITTLE_WORK, WorkloadCost } from '../../src/domain/workload.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { perBlock } from '../support/fixture.ts';
import { type CpuWork, type IdleTree, makeIdleTree } from '../support/idle-tree.ts';
import { withMcpClient } from '../support/mcp.ts';
import { runCli } from '../support/processes.ts';
import { appOver } from '../support/server.ts';
import { callError } from '../surfaces/mcp-checks.ts';

/** 2 CPUs, states POLL (0 us) and C1 (8 us); `at` seconds after boot with `busy` ticks per CPU per second. */
const work = (at: number, busyPerS: number, entriesPerS: number): CpuWork[] =>
  [0, 1].map(() => ({
    busyTicks: Math.round(at * busyPerS),
    idleTicks: Math.round(at * (100 - busyPerS)),
    states: [
      { usage: Math.round(at * entriesPerS * 0.1), timeUs: Math.round(at * 1000) },
      {
        usage: Math.round(at * entriesPerS * 0.9),
        timeUs: Math.round(at * (10_000 * (100 - busyPerS) - 1000)),
        above: at,
        below: 2 * at,
      },
    ],
  }));

const rig = perBlock(
  async () => {
    const tree = await makeIdleTree(await mkdtemp(join(tmpdir(), 'powerplan-idle-')), 2, [
      { name: 'POLL', latency: 0 },
      { name: 'C1', latency: 8 },
    ]);
    await tree.write(100, work(100, 0, 0));
    const t = await testDeps({ POWERPLAN_SYSFS_ROOT: tree.sysfs, POWERPLAN_PROCFS_ROOT: tree.procfs });
    return { tree, t };
  },
  async ({ tree, t }) => {
    await t.cleanup();
    await tree.cleanup();
  },
) as { tree: IdleTree; t: TestDeps };

describe('get_workload_cost on every surface', () => {
  it('REST: a read without a window compares with the previous read; the first with boot', async () => {
    const app = appOver(rig.t);
    await rig.tree.write(100, work(100, 0, 0));
    const first = WorkloadCost.parse(await (await app.request('/v1/workload')).json());
    assert.equal(first.observation.since, 'boot');
    assert.equal(first.observation.windowSeconds, 100);
    // An idle machine says so instead of a number.
    assert.equal(first.estimate, null);
    assert.equal(first.reason, TOO_LITTLE_WORK);
    assert.match(first.summary, /too little work observed to estimate/);
    const busy = work(110, 0, 0);
    // 10 s later: 40% busy on each CPU, 1000 entries/s on each.
    for (const [c, w] of busy.entries()) {
      const base = work(100, 0, 0)[c]!;
      w.busyTicks = base.busyTicks + 400;
      w.idleTicks = base.idleTicks + 600;
      w.states[0]!.usage = base.states[0]!.usage + 1000;
      w.states[0]!.timeUs = base.states[0]!.timeUs + 100_000;
      w.states[1]!.usage = base.states[1]!.usage + 9000;
      w.states[1]!.timeUs = base.states[1]!.timeUs + 5_900_000;
    }
    await rig.tree.write(110, busy);
    const second = WorkloadCost.parse(await (await app.request('/v1/workload')).json());
    const o = second.observation;
    assert.equal(o.since, 'previous-read');
    assert.equal(o.windowSeconds, 10);
    assert.equal(o.busyShare, 0.4);
    assert.equal(o.busySeconds, 8);
    assert.equal(o.idleEntriesPerSecond, 2000);
    assert.equal(o.meanIdlePeriodUs, 600);
    assert.equal(o.meanBusyPeriodUs, 400);
    assert.deepEqual(
      o.states.map((s) => [s.name, s.entriesPerSecond, s.meanPeriodUs, s.exitLatencyUs]),
      [
        ['POLL', 200, 100],
        ['C1', 1800, 655.6],
      ].map(([n, e, m], i) => [n, e, m, i === 0 ? 0 : 8]),
    );
    // No benchmark: the published exit latencies, marked as such; 1800 wake-ups/s x 8 us over 0.8 s of work per s.
    assert.ok(second.estimate);
    assert.equal(second.estimate.basis, 'published-latencies');
    assert.equal(second.estimate.addedPercent, 1.8);
    assert.equal(second.estimate.low, 0.9);
    assert.equal(second.estimate.high, 1.8);
    assert.equal(second.estimate.rampPercent, 0);
    assert.match(
      second.summary,
      /^at this server's load over the last 10 s the plan .* adds ~1\.8% \(0\.9-1\.8%\)/,
    );
  });

  it('REST refuses a bad window with a problem and reads nothing', async () => {
    const app = appOver(rig.t);
    for (const w of ['0s', 'abc', '10m', '-1s', '1e3s']) {
      const res = await app.request(`/v1/workload?window=${encodeURIComponent(w)}`);
      assert.equal(res.status, 400, w);
      assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
      assert.match(((await res.json()) as { detail: string }).detail, /window/);
    }
  });

  it('REST: ?cpus=0 observes CPU 0 only, and says so; a list that is none, or names no CPU here, is a problem and moves no previous read', async () => {
    const app = appOver(rig.t);
    await rig.tree.write(500, work(500, 0, 0));
    await app.request('/v1/workload');
    // 10 s later CPU 0 did 40% work and woke 1000 times a second; CPU 1 did nothing.
    const moved = work(510, 0, 0);
    const [base0, base1] = work(500, 0, 0);
    Object.assign(moved[0]!, {
      busyTicks: base0!.busyTicks + 400,
      idleTicks: base0!.idleTicks + 600,
      states: [
        { usage: base0!.states[0]!.usage + 1000, timeUs: base0!.states[0]!.timeUs + 100_000 },
        { usage: base0!.states[1]!.usage + 9000, timeUs: base0!.states[1]!.timeUs + 5_900_000 },
      ],
    });
    Object.assign(moved[1]!, { ...base1!, idleTicks: base1!.idleTicks + 1000 });
    moved[1]!.states[1]!.timeUs += 10_000_000;
    await rig.tree.write(510, moved);
    for (const [cpus, detail] of [
      ['garbage', /cpus: must be a CPU list/],
      ['0,', /cpus: must be a CPU list/],
      ['3-1', /cpus: must be a CPU list/],
      ['8192', /cpus: must be a CPU list/],
      ['0,'.repeat(600), /cpus: .*1024/],
      ['2-7', /cpus: none of 2-7 is a CPU this system counts; its CPUs are 0-1/],
    ] as const) {
      const res = await app.request(`/v1/workload?cpus=${encodeURIComponent(cpus)}`);
      assert.equal(res.status, 400, cpus);
      assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
      const problem = (await res.json()) as { detail: string; code: string };
      assert.equal(problem.code, 'invalid_input');
      assert.match(problem.detail, detail);
    }
    const res = await app.request('/v1/workload?cpus=0');
    assert.equal(res.status, 200);
    const cost = WorkloadCost.parse(await res.json());
    const o = cost.observation;
    // Over the 10 s since the last read that succeeded.
    assert.equal(o.windowSeconds, 10);
    assert.equal(o.cpus, 1);
    assert.equal(o.cpuSet, '0');
    assert.equal(o.busyShare, 0.4);
    assert.equal(o.idleEntriesPerSecond, 1000);
    assert.deepEqual(
      o.perCpu.map((c) => c.cpu),
      [0],
    );
    assert.deepEqual(
      o.states.map((s) => [s.name, s.entriesPerSecond]),
      [
        ['POLL', 100],
        ['C1', 900],
      ],
    );
    assert.match(cost.summary, /^at this server's load on CPU 0 over the last 10 s the plan /);
    // All CPUs, against the raw counters kept by that read: nothing happened since.
    const all = WorkloadCost.parse(await (await app.request('/v1/workload?cpus=1,0')).json());
    assert.equal(all.observation.cpuSet, '0-1');
    assert.equal(all.observation.cpus, 2);
  });

  it('MCP: a window reports progress while it observes, and the deltas are over the window', async () => {
    await rig.tree.write(200, work(200, 50, 5000));
    const seen: number[] = [];
    const result = await withMcpClient(rig.t.deps, (client) =>
      client.callTool({ name: 'get_workload_cost', arguments: { window: '2s' } }, undefined, {
        onprogress: (p) => {
          seen.push(p.progress);
          // The workload moves on while the window is open.
          if (seen.length === 1) void rig.tree.write(204, work(204, 50, 5000));
        },
      }),
    );
    assert.ok(!result.isError, JSON.stringify(result.content));
    const cost = WorkloadCost.parse(result.structuredContent);
    assert.deepEqual(seen, [1, 2]);
    assert.equal(cost.observation.since, 'window');
    assert.equal(cost.observation.windowSeconds, 4);
    assert.equal(cost.observation.busyShare, 0.5);
    assert.equal(cost.observation.idleEntriesPerSecond, 10_000);
  });

  it('MCP: cpus observes those CPUs; a list that is none is isError', async () => {
    await rig.tree.write(600, work(600, 30, 2000));
    const result = await withMcpClient(rig.t.deps, (client) =>
      client.callTool({ name: 'get_workload_cost', arguments: { cpus: '1' } }),
    );
    assert.ok(!result.isError, JSON.stringify(result.content));
    const o = WorkloadCost.parse(result.structuredContent).observation;
    assert.equal(o.cpuSet, '1');
    assert.equal(o.cpus, 1);
    assert.deepEqual(
      o.perCpu.map((c) => c.cpu),
      [1],
    );
    for (const cpus of ['0-', 'one', '0-3:2/4'])
      assert.match(
        await withMcpClient(rig.t.deps, (client) => callError(client, 'get_workload_cost', { cpus })),
        /cpus: must be a CPU list such as 0, 0-3 or 0-3,8,10-11/,
      );
    assert.match(
      await withMcpClient(rig.t.deps, (client) => callError(client, 'get_workload_cost', { cpus: '5' })),
      /none of 5 is a CPU this system counts/,
    );
  });

  it('/metrics: the raw counters as counters and the estimate as gauges', async () => {
    const app = appOver(rig.t);
    await rig.tree.write(300, work(300, 30, 2000));
    await app.request('/metrics');
    await rig.tree.write(310, work(310, 30, 2000));
    const text = await (await app.request('/metrics')).text();
    assert.match(text, /^# TYPE powerplan_idle_state_entries_total counter$/m);
    assert.match(
      text,
      new RegExp(
        `^powerplan_idle_state_entries_total\\{state="C1"\\} ${2 * Math.round(310 * 2000 * 0.9)}$`,
        'm',
      ),
    );
    assert.match(text, /^powerplan_idle_state_below_total\{state="C1"\} 1240$/m);
    assert.match(text, /^powerplan_cpu_busy_seconds_total 186$/m);
    assert.match(text, /^powerplan_workload_window_seconds 10$/m);
    assert.match(text, /^powerplan_workload_estimated 1$/m);
    assert.match(text, /^powerplan_workload_added_ratio \d/m);
  });

  it('CLI: powerplan workload prints the sentence, --json the answer REST gives', async () => {
    await rig.tree.write(400, work(400, 30, 2000));
    const r = await runCli(['workload'], rig.t.env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /since boot \(7 min\)/);
    assert.match(r.stdout, /C1: .*exit latency 8 us/);
    const j = await runCli(['workload', '--json'], rig.t.env);
    assert.equal(WorkloadCost.parse(JSON.parse(j.stdout)).observation.cpus, 2);
    const bad = await runCli(['workload', '--window', 'soon'], rig.t.env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /window/);
    const one = await runCli(['workload', '--cpus', '1'], rig.t.env);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /^observed: CPU 1, cpuidle/m);
    const garbage = await runCli(['workload', '--cpus', '0-1,x'], rig.t.env);
    assert.equal(garbage.code, 1);
    assert.match(garbage.stderr, /--cpus: must be a CPU list/);
  });
});
