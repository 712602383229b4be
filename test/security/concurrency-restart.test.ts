import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { Store } from '../../src/lib/store.ts';
import { defaultSimulatedState } from '../../src/platform/simulated/simulated-state.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { startHttpServer } from '../../src/surfaces/http/server.ts';
import { repoRoot } from '../support/deps.ts';
import { depsPerBlock, perBlock } from '../support/fixture.ts';
import { startServer } from '../support/processes.ts';
import { bearer, secureHarness } from './harness.ts';

interface AuditLine {
  result: string;
  before?: { id: string };
  after?: { id: string };
}

describe('concurrent plan changes', () => {
  const h = perBlock(
    () => secureHarness(),
    (x) => x.cleanup(),
  );

  it('50 parallel set_power_plan calls alternating two plans end consistent, one audit line per change', async () => {
    const plans = [SCHEME.highPerformance, SCHEME.balanced];
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        h.app.request('/v1/plans/active', {
          method: 'PUT',
          headers: { 'content-type': 'application/json', ...bearer(h.tokens.control) },
          body: JSON.stringify({ plan: plans[i % 2] }),
        }),
      ),
    );
    const bodies = await Promise.all(
      responses.map(async (r) => ({ status: r.status, body: await r.json() })),
    );
    for (const { status } of bodies) assert.ok(status === 200 || status === 409, `status ${status}`);
    const changed = bodies.filter((b) => b.status === 200 && b.body.changed).length;
    assert.ok(changed > 0);

    const lines = (await h.t.deps.store.readLines('audit.jsonl')) as AuditLine[];
    const changes = lines.filter((l) => l.result === 'changed');
    assert.equal(changes.length, changed, 'one audit line per real change');
    // The changes form one chain: each starts where the previous one ended.
    let at: string = SCHEME.balanced;
    for (const c of changes) {
      assert.equal(c.before?.id, at);
      at = c.after!.id;
    }
    const active = (await h.t.deps.backend.getActive()).plan?.id;
    assert.ok(plans.includes(active as (typeof plans)[number]));
    assert.equal(active, at, 'the active plan is the one the last audit line says');
  });
});

describe('restart and torn writes', () => {
  const t = depsPerBlock();

  it('the backend state and the audit log survive a restart of powerplan serve', async () => {
    const first = await startServer(t.env);
    try {
      const res = await fetch(`${first.url}/v1/plans/active`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...first.asAdmin },
        body: JSON.stringify({ plan: 'power-saver' }),
      });
      assert.equal(res.status, 200);
    } finally {
      assert.equal(await first.stop('SIGTERM'), 0);
    }
    const second = await startServer(t.env);
    try {
      const active = await (await fetch(`${second.url}/v1/plans/active`)).json();
      assert.equal(active.plan.id, SCHEME.powerSaver);
      const audit = await (await fetch(`${second.url}/v1/audit`, { headers: second.asAdmin })).json();
      assert.deepEqual(
        audit.records.map((r: AuditLine) => [r.result, r.after?.id]),
        [['changed', SCHEME.powerSaver]],
      );
    } finally {
      assert.equal(await second.stop('SIGINT'), 0);
    }
  });

  it('a torn temp file and a torn last audit line are ignored', async () => {
    const store = new Store(t.dir);
    const before = await store.read('simulated-backend.json', z.object({ activeId: z.string() }).loose());
    await writeFile(join(t.dir, 'simulated-backend.json.999.deadbeef.tmp'), '{"activeId": "8c5e7fda-');
    assert.deepEqual(
      await store.read('simulated-backend.json', z.object({ activeId: z.string() }).loose()),
      before,
    );
    const lines = await store.readLines('audit.jsonl');
    await appendFile(store.path('audit.jsonl'), '{"time":"2025-01-01T00:00:00Z","caller":"lo');
    assert.deepEqual(await store.readLines('audit.jsonl'), lines);
    // The next record after a torn line starts on a line of its own and is kept.
    const next = {
      time: '2025-01-02T00:00:00Z',
      caller: 'local',
      operation: 'set_power_plan',
      result: 'changed',
    };
    await store.append('audit.jsonl', next);
    assert.deepEqual(await store.readLines('audit.jsonl'), [...lines, next]);
  });

  it('kill -9 of a process writing in a loop leaves a readable state and audit log', async () => {
    const script = `
      import { Store } from ${JSON.stringify(join(repoRoot, 'src/lib/store.ts'))};
      const store = new Store(process.argv[1]);
      const states = ${JSON.stringify([SCHEME.balanced, SCHEME.highPerformance])};
      for (let i = 0; ; i++) {
        const state = ${JSON.stringify(defaultSimulatedState())};
        state.activeId = states[i % 2];
        state.padding = 'x'.repeat(200000);
        await store.write('simulated-backend.json', state);
        await store.append('audit.jsonl', { time: new Date().toISOString(), caller: 'local', operation: 'set_power_plan', result: 'changed', input: { n: i, padding: 'y'.repeat(3000) } });
        if (i === 3) process.stdout.write('writing\\n');
      }`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, t.dir], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`writer exited early with ${code}`)));
    });
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;

    const store = new Store(t.dir);
    const state = await store.read('simulated-backend.json', z.object({ activeId: z.string() }).loose());
    assert.ok(state, 'the state file is whole');
    assert.ok([SCHEME.balanced, SCHEME.highPerformance].includes(state.activeId as never));
    const raw = (await readFile(store.path('audit.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const parsed = await store.readLines('audit.jsonl');
    assert.ok(parsed.length >= 4);
    assert.ok(parsed.length >= raw.length - 1, 'at most the last line is lost');
    // A running server on the same state directory still answers.
    const server = await startServer(t.env);
    try {
      assert.equal((await fetch(`${server.url}/v1/plans/active`)).status, 200);
      assert.equal(
        (await fetch(`${server.url}/v1/audit?limit=1000`, { headers: server.asAdmin })).status,
        200,
      );
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const leftovers = (await readdir(t.dir)).filter((f) => f.endsWith('.tmp'));
    assert.ok(
      leftovers.every((f) => f.startsWith('simulated-backend.json.')),
      'only temp files, never the target, are torn',
    );
  });
});

describe('graceful shutdown', () => {
  const t = depsPerBlock();

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: stops accepting and exits 0, even with a half-sent request open`, async () => {
      const server = await startServer(t.env);
      const { port } = new URL(server.url);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write('PUT /v1/plans/active HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{"plan"');
      socket.on('error', () => {});
      assert.equal(await server.stop(signal), 0);
      await assert.rejects(fetch(`${server.url}/healthz`), 'no longer accepting');
      socket.destroy();
    });
  }

  it('closing the in-process server aborts the shutdown signal that running work listens to', async () => {
    const running = await startHttpServer({ ...t.deps, config: { ...t.deps.config, port: 0 } });
    assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
    assert.equal(t.deps.shutdown.signal.aborted, false);
    await running.close();
    assert.equal(t.deps.shutdown.signal.aborted, true);
    await assert.rejects(fetch(`${running.url}/healthz`));
  });
});
