/**
 * The Ansible role and example playbook against a real `powerplan serve` on the simulated backend,
 * with a token file so the Authorization header is exercised: the first run changes the plan, the
 * second changes nothing, check mode reports the change it would make and makes none (checked
 * through GET /v1/plans/active), and a run without a token fails. Then in the default mode (no
 * token file, no token configured): run as root, the role picks up the local administrator
 * credential and sets the plan; without it, the service refuses the change.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/lib/tokens.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { type ServerProcess, startServer } from '../support/processes.ts';
import { ansibleInstall as install, prepareAnsible, requireTool, run, runPlaybook } from './tools.ts';

interface Recap {
  ok: number;
  changed: number;
  failed: number;
  output: string;
}

const recap = (r: { code: number | null; stdout: string; stderr: string }): Recap => {
  const output = `${r.stdout}\n${r.stderr}`;
  const m = /^localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)/m.exec(r.stdout);
  assert.ok(m, `no PLAY RECAP for localhost (exit ${r.code}):\n${output}`);
  return { ok: Number(m[1]), changed: Number(m[2]), failed: Number(m[3]), output };
};

describe('Ansible role powerplan and examples/site.yml', () => {
  let t: TestDeps;
  let server: ServerProcess | undefined;
  let token = '';
  let available = false;

  const playbook = async (extra: string[], withToken = true): Promise<Recap> =>
    recap(
      await runPlaybook(t.dir, 'site.yml', server!.url, [
        ...(withToken ? ['-e', `powerplan_token=${token}`] : []),
        ...extra,
      ]),
    );

  const activeKind = async () => {
    const res = await fetch(`${server!.url}/v1/plans/active`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { plan: { kind: string } }).plan.kind;
  };

  before(async () => {
    available = (await run('ansible-playbook', ['--version'], { timeoutMs: 60_000 })).code === 0;
    t = await testDeps();
    if (!available) return;
    const tokenFile = join(t.dir, 'tokens.json');
    token = (await createToken(tokenFile, 'ansible', ['control'])).token;
    await prepareAnsible(t.dir);
    server = await startServer({ ...t.env, POWERPLAN_TOKEN_FILE: tokenFile });
  });
  after(async () => {
    await server?.stop();
    await t.cleanup();
  });

  it('changes the plan on the first run, reports it, and benchmarks', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    assert.equal(await activeKind(), 'balanced');
    const r = await playbook([
      '-e',
      'powerplan_apply=true',
      '-e',
      'powerplan_plan=high-performance',
      '-e',
      'powerplan_benchmark=true',
      '-e',
      'powerplan_benchmark_force=true',
    ]);
    assert.equal(r.failed, 0, r.output);
    assert.equal(r.changed, 1, r.output);
    assert.match(r.output, /changed: \[localhost\]/);
    assert.match(r.output, /plan: Balanced \(balanced, 381b4222-f694-41f0-9685-ff5bb260df2e\)/);
    assert.match(r.output, /advice: \S/);
    assert.match(r.output, /set: Balanced -> High performance \(changed\)/);
    assert.equal(await activeKind(), 'high-performance');
    const benchmarks = await fetch(`${server!.url}/v1/benchmarks`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(((await benchmarks.json()) as { total: number }).total, 1);
  });

  it('changes nothing on the second run', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const r = await playbook(['-e', 'powerplan_apply=true', '-e', 'powerplan_plan=high-performance']);
    assert.equal(r.failed, 0, r.output);
    assert.equal(r.changed, 0, r.output);
    assert.match(r.output, /set: High performance -> High performance \(already active\)/);
    assert.equal(await activeKind(), 'high-performance');
  });

  it('in check mode reports the change it would make and makes none', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const r = await playbook(['--check', '-e', 'powerplan_apply=true', '-e', 'powerplan_plan=balanced']);
    assert.equal(r.failed, 0, r.output);
    assert.equal(r.changed, 1, r.output);
    assert.match(r.output, /set: High performance -> Balanced \(would change, check mode\)/);
    assert.equal(await activeKind(), 'high-performance');

    const same = await playbook([
      '--check',
      '-e',
      'powerplan_apply=true',
      '-e',
      'powerplan_plan=high-performance',
    ]);
    assert.equal(same.failed, 0, same.output);
    assert.equal(same.changed, 0, same.output);
    assert.equal(await activeKind(), 'high-performance');
  });

  it('fails without the token the service asks for', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const r = await playbook([], false);
    assert.equal(r.failed, 1, r.output);
    assert.match(r.output, /401/);
  });
});

describe('Ansible role in the default mode: the local administrator credential', () => {
  let t: TestDeps;
  let server: ServerProcess | undefined;
  let available = false;

  before(async () => {
    available = (await run('ansible-playbook', ['--version'], { timeoutMs: 60_000 })).code === 0;
    t = await testDeps();
    if (!available) return;
    await prepareAnsible(t.dir);
    server = await startServer(t.env);
  });
  after(async () => {
    await server?.stop();
    await t.cleanup();
  });

  const activeKind = async () =>
    ((await (await fetch(`${server!.url}/v1/plans/active`)).json()) as { plan: { kind: string } }).plan.kind;

  it('as root, with no token configured, reads admin.token and sets the plan (audited as local-admin)', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const r = recap(
      await runPlaybook(t.dir, 'site.yml', server!.url, [
        '-e',
        `powerplan_state_dir=${t.dir}`,
        '-e',
        'powerplan_apply=true',
        '-e',
        'powerplan_plan=high-performance',
      ]),
    );
    assert.equal(r.failed, 0, r.output);
    assert.equal(r.changed, 1, r.output);
    assert.match(r.output, /set: Balanced -> High performance \(changed\)/);
    assert.doesNotMatch(r.output, /pp_[A-Za-z0-9_-]{43}/, 'the credential is never printed');
    assert.equal(await activeKind(), 'high-performance');
    const audit = (await t.deps.store.readLines('audit.jsonl')) as { caller: string; result: string }[];
    assert.deepEqual(
      audit.filter((a) => a.result === 'changed').map((a) => a.caller),
      ['local-admin'],
    );
  });

  it('without the credential (not readable: no become) the change is refused and nothing changes', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const r = recap(
      await runPlaybook(t.dir, 'site.yml', server!.url, [
        '-e',
        `powerplan_admin_token_file=${join(t.dir, 'not-there.token')}`,
        '-e',
        'powerplan_apply=true',
        '-e',
        'powerplan_plan=balanced',
      ]),
    );
    assert.equal(r.failed, 1, r.output);
    assert.match(r.output, /403/);
    assert.match(r.output, /needs the 'control' scope; the caller 'local' does not have it/);
    assert.match(
      r.output,
      /Read the active power plan \(GET \/v1\/plans\/active\)\] \*+\nok: \[localhost\]/,
      'reading still works without a token',
    );
    assert.equal(await activeKind(), 'high-performance');
  });
});
