/**
 * Each operation's annotations (MCP's readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
 * held to what the operation does, not to what its file says: every operation is run, with an input
 * that asks for the most it can do, on the simulated backend with every plan switch counted (the
 * fleet's on an agent of its own). readOnly is exactly the GET operations; destructive exactly those
 * that switched a plan; idempotent those whose second run with the same input switched nothing and
 * added nothing; openWorld those that reached another host.
 */
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BenchmarkService } from '../../src/bench/service.ts';
import type { Deps } from '../../src/deps.ts';
import { localCaller } from '../../src/domain/scopes.ts';
import { createToken } from '../../src/lib/tokens.ts';
import type { Operation } from '../../src/operations/define.ts';
import { operations } from '../../src/operations/index.ts';
import { runOperation } from '../../src/operations/run.ts';
import { type RunningServer, startHttpServer } from '../../src/surfaces/http/server.ts';
import { benchmarkResult } from '../advice/scenarios.ts';
import { validSample } from '../security/harness.ts';
import { contextOf } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';

/** The most each operation can be asked to do (the rest: a valid sample of its input). */
const inputs: Record<string, (t: TestDeps) => Promise<Record<string, unknown>>> = {
  set_power_plan: async () => ({ plan: 'high-performance' }),
  hold_power_plan: async () => ({ plan: 'power-saver', durationSeconds: 3600, reason: 'test' }),
  release_power_plan: async (t) => {
    const { hold } = await t.deps.holds.create(localCaller, { plan: 'power-saver', seconds: 3600 });
    return { id: hold.id };
  },
  set_desired_power_plan: async () => ({ plan: 'high-performance', enforce: true }),
  compare_power_plans: async () => ({ plans: ['high-performance'], settleMs: 0 }),
  run_cpu_benchmark: async () => ({}),
  set_fleet_power_plan: async () => ({ plan: 'high-performance', hosts: ['agent'] }),
  get_fleet_status: async () => ({ hosts: ['agent'] }),
};

/** A benchmark stand-in: the annotations are about effects, not about loading the CPU. */
const fakeBench = () => {
  const stored: ReturnType<typeof benchmarkResult>[] = [];
  return {
    list: async () => ({ total: stored.length, benchmarks: stored.map((r) => r.summary) }),
    get: async (id: string) => stored.find((r) => r.id === id)!,
    latest: () => stored[0],
    run: async () => {
      const r = benchmarkResult(30, { id: `bm-20250101-120000-${String(stored.length).padStart(6, '0')}` });
      stored.unshift(r);
      return r;
    },
  } as unknown as BenchmarkService;
};

/** Counts the plan switches of a deps' backend. */
const countSwitches = (deps: Deps) => {
  const counter = { n: 0 };
  const setActive = deps.backend.setActive.bind(deps.backend);
  deps.backend.setActive = async (id: string) => {
    counter.n++;
    return setActive(id);
  };
  return counter;
};

/** What a run left behind that a repeat could add to: holds, benchmarks, audit lines aside. */
const footprint = async (deps: Deps) => ({
  holds: (await deps.holds.list()).holds.length,
  benchmarks: (await deps.bench.list(50)).total,
  desired: await deps.desired.state().then((d) => `${d.planId} ${d.enforce}`),
});

interface Observed {
  switched: boolean;
  again: boolean;
  added: boolean;
  remote: boolean;
}

describe('MCP annotations are true to what each operation does', () => {
  let agent: { t: TestDeps; server: RunningServer; switches: { n: number } };
  /** The fleet's only host: the agent behind a proxy that counts what reaches it. */
  const proxy = createServer((req, res) => {
    requests++;
    const { port } = new URL(agent.server.url);
    const out = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(out);
  });
  let requests = 0;
  const observed = new Map<string, Observed>();

  before(async () => {
    const t = await testDeps({ POWERPLAN_PORT: '0', POWERPLAN_HOST: '127.0.0.1' });
    const tokenFile = join(t.dir, 'agent-tokens.json');
    const { token } = await createToken(tokenFile, 'fleet', ['control']);
    t.deps.config.tokenFile = tokenFile;
    agent = { t, server: await startHttpServer(t.deps), switches: countSwitches(t.deps) };
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    await writeFile(join(t.dir, 'agent.token'), token, { mode: 0o600 });
    const fleetFile = join(t.dir, 'fleet.json');
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await writeFile(fleetFile, JSON.stringify({ hosts: [{ name: 'agent', url, tokenFile: 'agent.token' }] }));
    await chmod(fleetFile, 0o600);
    const fleetEnv = { POWERPLAN_FLEET_FILE: fleetFile };
    for (const op of operations) {
      const local = await testDeps(fleetEnv, { bench: fakeBench() });
      try {
        const switches = countSwitches(local.deps);
        const input = await (inputs[op.name] ?? (async () => validSample(op)))(local);
        const before = { local: switches.n, agent: agent.switches.n, requests };
        const run = async () => {
          const r = await runOperation(op, input, contextOf(local.deps)).catch((e: Error) => e);
          // What the background check then does (an enforced desired plan is set at the next one).
          await local.deps.desired.check();
          return r;
        };
        const first = await run();
        if (first instanceof Error && !op.annotations.readOnly)
          throw new Error(`${op.name}: ${first.message}`);
        const afterFirst = {
          local: switches.n,
          agent: agent.switches.n,
          footprint: await footprint(local.deps),
        };
        await run();
        observed.set(op.name, {
          switched: afterFirst.local > before.local || afterFirst.agent > before.agent,
          again: switches.n > afterFirst.local || agent.switches.n > afterFirst.agent,
          added: JSON.stringify(await footprint(local.deps)) !== JSON.stringify(afterFirst.footprint),
          remote: requests > before.requests,
        });
      } finally {
        await local.cleanup();
      }
    }
  });
  after(async () => {
    proxy.close();
    await agent?.server.close();
    await agent?.t.cleanup();
  });

  const each = (check: (op: Operation, o: Observed) => void) => {
    for (const op of operations) check(op, observed.get(op.name)!);
  };

  it('readOnly is exactly the GET operations, and a read switches nothing and repeats harmlessly', () => {
    each((op, o) => {
      assert.equal(op.annotations.readOnly, op.http.method === 'GET', `${op.name} (${op.http.method})`);
      if (!op.annotations.readOnly) return;
      assert.deepEqual([o.switched, o.again, o.added], [false, false, false], `${op.name} changed something`);
      assert.deepEqual([op.annotations.destructive, op.annotations.idempotent], [false, true], op.name);
    });
  });

  it('destructive is exactly the operations that switched a plan (here or on a fleet agent)', () => {
    each((op, o) =>
      assert.equal(op.annotations.destructive, o.switched, `${op.name}: switched=${o.switched}`),
    );
    assert.ok(observed.get('set_fleet_power_plan')!.switched, 'the fleet set switched the agent');
  });

  it('idempotent is exactly the operations whose repeat switched nothing and added nothing', () => {
    each((op, o) =>
      assert.equal(
        op.annotations.idempotent,
        !o.again && !o.added,
        `${op.name}: again=${o.again} added=${o.added}`,
      ),
    );
  });

  it('openWorld is exactly the operations that reached another host', () => {
    each((op, o) => {
      if (op.name === 'list_fleet_hosts') {
        // Its hosts come from Prometheus when the fleet does (a fleet file here: it contacts nobody).
        assert.equal(op.annotations.openWorld, true);
        return;
      }
      assert.equal(op.annotations.openWorld, o.remote, `${op.name}: remote=${o.remote}`);
    });
  });
});
