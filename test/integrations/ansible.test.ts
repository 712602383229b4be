/**
 * The Ansible collection powerplan.powerplan (integrations/ansible) as a user gets it: built and
 * installed with ansible-galaxy, its modules' documentation rendered by ansible-doc, and the role
 * with examples/site.yml run by ansible-playbook against two live services on the simulated
 * backend (agent_a with a token file, agent_b without, where no token is configured: run as root,
 * the modules and the role call through the service's control socket by themselves):
 * --check --diff changes nothing and shows the change, a real run changes both hosts and a second
 * one nothing, a refused call fails with the service's own detail as msg; without the control
 * socket the default mode refuses changes; the desired plan and holds through the modules.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/lib/tokens.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { type ServerProcess, startServer } from '../support/processes.ts';
import {
  ansibleInstall as install,
  prepareAnsible,
  requireTool,
  run,
  runAnsible,
  runPlaybook,
} from './tools.ts';

const hosts = ['agent_a', 'agent_b'] as const;
type Host = (typeof hosts)[number];

interface Run {
  code: number | null;
  recap: Record<Host, { ok: number; changed: number; failed: number }>;

  output: string;
}

describe('Ansible collection powerplan.powerplan (modules, role, examples/site.yml)', () => {
  let dir: TestDeps;
  const agents: Partial<Record<Host, { deps: TestDeps; server: ServerProcess }>> = {};
  let control = '';
  let read = '';
  let available = false;

  const url = (h: Host) => agents[h]!.server.url;
  const auth = (h: Host) => (h === 'agent_a' ? { authorization: `Bearer ${control}` } : undefined);
  const activeKind = async (h: Host) => {
    const res = await fetch(`${url(h)}/v1/plans/active`, { headers: auth(h) });
    assert.equal(res.status, 200);
    return ((await res.json()) as { plan: { kind: string } }).plan.kind;
  };

  const recapOf = (stdout: string) => {
    const recap = {} as Run['recap'];
    for (const h of hosts) {
      const m = new RegExp(
        `^${h}\\s*:\\s*ok=(\\d+)\\s+changed=(\\d+)\\s+unreachable=\\d+\\s+failed=(\\d+)`,
        'm',
      ).exec(stdout);
      // A host left out (--limit) has no line; its counts stay undefined, so no assertion passes by chance.
      if (m) recap[h] = { ok: Number(m[1]), changed: Number(m[2]), failed: Number(m[3]) };
    }
    return recap;
  };

  const site = async (extra: string[]): Promise<Run> => {
    const r = await runPlaybook(dir.dir, 'site.yml', undefined, extra);
    const output = `${r.stdout}\n${r.stderr}`;
    return { code: r.code, recap: recapOf(r.stdout), output };
  };

  /** One module run ad hoc (`ansible -m`) against hosts of the inventory. */
  const adhoc = (pattern: string, module: string, args: string, extra: string[] = []) =>
    runAnsible(dir.dir, 'ansible', [
      '-i',
      join(dir.dir, 'inventory.ini'),
      pattern,
      '-m',
      `powerplan.powerplan.${module}`,
      '-a',
      args,
      ...extra,
    ]);

  /** The JSON of `FAILED! => {...}` for a host in ansible's default output. */
  const failure = (output: string, h: Host) => {
    const m = new RegExp(`^fatal: \\[${h}\\]: FAILED! => (\\{.*\\})$`, 'm').exec(output);
    assert.ok(m, `no failure of ${h}:\n${output}`);
    return JSON.parse(m[1]!) as { msg: string; status: number; code: string; changed: boolean };
  };

  before(async () => {
    available = (await run('ansible-playbook', ['--version'], { timeoutMs: 60_000 })).code === 0;
    dir = await testDeps();
    if (!available) return;
    for (const h of hosts) {
      const deps = await testDeps();
      let env = deps.env;
      if (h === 'agent_a') {
        const file = join(deps.dir, 'tokens.json');
        control = (await createToken(file, 'ansible', ['control'])).token;
        read = (await createToken(file, 'ansible-read', ['read'])).token;
        env = { ...env, POWERPLAN_TOKEN_FILE: file };
      }
      agents[h] = { deps, server: await startServer(env) };
    }
    const python = 'ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"';
    await prepareAnsible(
      dir.dir,
      `[databases]\nagent_a ${python} powerplan_url=${url('agent_a')} powerplan_token=${control}\n` +
        // No token: only where the service keeps its credential (a test's own state directory).
        `agent_b ${python} powerplan_url=${url('agent_b')} powerplan_state_dir=${agents.agent_b!.deps.dir}\n`,
    );
  });
  after(async () => {
    for (const a of Object.values(agents)) {
      await a.server.stop();
      await a.deps.cleanup();
    }
    await dir.cleanup();
  });

  it('installs with ansible-galaxy, and ansible-doc renders each module', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const list = await runAnsible(dir.dir, 'ansible-doc', ['-t', 'module', '-l', 'powerplan.powerplan']);
    assert.equal(list.code, 0, list.stderr);
    for (const m of ['powerplan_info', 'powerplan_plan', 'powerplan_hold', 'powerplan_benchmark']) {
      assert.match(list.stdout, new RegExp(`^powerplan\\.powerplan\\.${m} +\\S`, 'm'));
      const doc = await runAnsible(dir.dir, 'ansible-doc', [`powerplan.powerplan.${m}`]);
      assert.equal(doc.code, 0, doc.stderr);
      assert.doesNotMatch(doc.stderr, /WARNING|ERROR/, doc.stderr);
      for (const section of ['OPTIONS', 'ATTRIBUTES', 'EXAMPLES:', 'RETURN VALUES:']) {
        assert.ok(doc.stdout.includes(section), `${m}: no ${section}\n${doc.stdout}`);
      }
      // The shared options from the doc fragment, and an example that names the module.
      for (const option of ['url', 'token', 'validate_certs', 'ca_path', 'timeout']) {
        assert.match(doc.stdout, new RegExp(`^[-=] ${option}\\b`, 'm'), `${m}: option ${option}`);
      }
      assert.ok(doc.stdout.includes(`powerplan.powerplan.${m}:`), `${m}: its examples`);
      // What a failure returns, documented once in the fragment's notes for every module.
      assert.match(
        doc.stdout.replace(/\s+/g, ' '),
        /returns .status.*code.*problem. \(the whole problem\+json answer\)/,
        m,
      );
    }
    const plan = await runAnsible(dir.dir, 'ansible-doc', ['powerplan.powerplan.powerplan_plan']);
    assert.match(plan.stdout, /choices: \[active, desired, absent\]/);
    // Check and diff mode in full, from the fragment of the modules that change something.
    assert.match(plan.stdout.replace(/\s+/g, ' '), /diff_mode: .*support: full/);
  });

  it('--check --diff shows the change on both hosts and makes none', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const r = await site([
      '--check',
      '--diff',
      '-e',
      'powerplan_apply=true',
      '-e',
      'powerplan_plan=high-performance',
    ]);
    assert.equal(r.code, 0, r.output);
    for (const h of hosts) {
      assert.deepEqual([r.recap[h].changed, r.recap[h].failed], [1, 0], r.output);
      assert.equal(await activeKind(h), 'balanced');
    }
    assert.match(r.output, /^-\s+"name": "Balanced"$/m);
    assert.match(r.output, /^\+\s+"name": "High performance"$/m);
    assert.match(r.output, /^\+\s+"id": "8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c",?$/m);
    assert.match(r.output, /set: Balanced -> High performance \(would change, check mode\)/);
  });

  it('a real run changes both hosts and benchmarks; run again, it changes nothing', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const args = ['--diff', '-e', 'powerplan_apply=true', '-e', 'powerplan_plan=high-performance'];
    const bench = ['-e', 'powerplan_benchmark=true', '-e', 'powerplan_benchmark_force=true'];
    const first = await site([...args, ...bench]);
    assert.equal(first.code, 0, first.output);
    for (const h of hosts) {
      assert.deepEqual([first.recap[h].changed, first.recap[h].failed], [1, 0], first.output);
      assert.equal(await activeKind(h), 'high-performance');
    }
    assert.match(first.output, /set: Balanced -> High performance \(changed\)/);
    for (const h of hosts) {
      const list = await fetch(`${url(h)}/v1/benchmarks`, { headers: auth(h) });
      assert.equal(((await list.json()) as { total: number }).total, 1, `${h}: one benchmark stored`);
    }
    const second = await site(args);
    assert.equal(second.code, 0, second.output);
    for (const h of hosts) assert.deepEqual([second.recap[h].changed, second.recap[h].failed], [0, 0]);
    assert.doesNotMatch(second.output, /^--- before/m);
    assert.match(second.output, /set: High performance -> High performance \(already active\)/);
  });

  it('a refused call fails the task with the service detail as msg, and changes nothing', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    // What the service answers a read-only token, asked directly.
    const res = await fetch(`${url('agent_a')}/v1/plans/active`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${read}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'balanced', dryRun: true }),
    });
    assert.equal(res.status, 403);
    const problem = (await res.json()) as { detail: string; code: string };
    const r = await site([
      '-e',
      'powerplan_apply=true',
      '-e',
      'powerplan_plan=balanced',
      '-e',
      `powerplan_token=${read}`,
    ]);
    assert.notEqual(r.code, 0, r.output);
    assert.equal(r.recap.agent_a.failed, 1, r.output);
    const f = failure(r.output, 'agent_a');
    assert.equal(f.msg, problem.detail);
    assert.equal(f.status, 403);
    assert.equal(f.code, problem.code);
    assert.equal(f.changed, false);
    assert.doesNotMatch(r.output, /changed_when|has no attribute/);
    assert.equal(await activeKind('agent_a'), 'high-performance');
    // agent_b has no token file, so knows no token: one it does not know is refused, not ignored.
    assert.equal(r.recap.agent_b.failed, 1, r.output);
    assert.equal(failure(r.output, 'agent_b').status, 401);
    assert.equal(await activeKind('agent_b'), 'high-performance');
    // An unknown plan: the service's 404 detail, listing the plans.
    const unknown = await site([
      '-e',
      'powerplan_apply=true',
      '-e',
      'powerplan_plan=nope',
      '--limit',
      'agent_b',
    ]);
    assert.match(failure(unknown.output, 'agent_b').msg, /^Plan 'nope' not found; available: .*\(Balanced\)/);
  });

  it('the desired plan: --check --diff, set, set again unchanged, through the role', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const args = ['--diff', '-e', 'powerplan_desired=balanced', '-e', 'powerplan_desired_enforce=false'];
    const desired = async (h: Host) =>
      (await (await fetch(`${url(h)}/v1/desired`, { headers: auth(h) })).json()) as { planId: string | null };
    const check = await site(['--check', ...args]);
    for (const h of hosts) assert.equal(check.recap[h].changed, 1, check.output);
    assert.match(check.output, /^\+\s+"plan": "Balanced"$/m);
    assert.equal((await desired('agent_b')).planId, null);
    const first = await site(args);
    for (const h of hosts)
      assert.deepEqual([first.recap[h].changed, first.recap[h].failed], [1, 0], first.output);
    assert.equal((await desired('agent_b')).planId, '381b4222-f694-41f0-9685-ff5bb260df2e');
    const again = await site(args);
    for (const h of hosts) assert.equal(again.recap[h].changed, 0, again.output);
    // No desired plan, with the module itself (ad hoc, each host's url and token from the inventory).
    const none = await adhoc(
      'all',
      'powerplan_plan',
      "state=absent url={{ powerplan_url }} token={{ powerplan_token | default('') }} control_socket={{ powerplan_state_dir | default('/var/lib/powerplan') }}/control/powerplan.sock",
    );
    for (const h of hosts) assert.match(none.stdout, new RegExp(`^${h} \\| CHANGED`, 'm'), none.stdout);
    assert.equal((await desired('agent_a')).planId, null);
  });

  it('without a token, a loopback service is called through its control socket, sending no token', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const socket = join(agents.agent_b!.deps.dir, 'control', 'powerplan.sock');
    const dry = (extra: string, base = url('agent_b')) =>
      adhoc('agent_b', 'powerplan_plan', `url=${base} plan=power-saver ${extra}`, ['--check']);
    const picked = await dry(`control_socket=${socket}`);
    assert.match(picked.stdout, /^agent_b \| CHANGED/m, picked.stdout);
    // No socket there (the default /var/lib/powerplan one belongs to no service of this test): TCP
    // without a token, which may only read: 403, told that no token was sent.
    const none = await dry(`control_socket=${join(dir.dir, 'absent.sock')}`);
    assert.match(none.stdout, /^agent_b \| FAILED!/m, none.stdout);
    assert.match(none.stdout, /"status": 403/);
    assert.match(none.stdout, /No token was sent/);
    assert.doesNotMatch(none.stdout, /not valid/);
    // Only for a loopback name: http://127.1:port reaches the same service over TCP, without a token.
    const elsewhere = await dry(`control_socket=${socket}`, url('agent_b').replace('127.0.0.1', '127.1'));
    assert.match(elsewhere.stdout, /"status": 403/, elsewhere.stdout);
    // The role: powerplan_token empty, the socket from powerplan_state_dir (the inventory's).
    const role = await site([
      '--limit',
      'agent_b',
      '--check',
      '-e',
      'powerplan_apply=true',
      '-e',
      'powerplan_plan=power-saver',
    ]);
    assert.deepEqual([role.recap.agent_b?.failed, role.recap.agent_b?.changed], [0, 1], role.output);
    assert.notEqual(await activeKind('agent_b'), 'power-saver');
  });

  it('powerplan_hold: taken once per reason, check mode takes none, released by reason with the plan restored', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const hold = (args: string, check = false) =>
      adhoc(
        'agent_b',
        'powerplan_hold',
        `url=${url('agent_b')} control_socket=${join(agents.agent_b!.deps.dir, 'control', 'powerplan.sock')} ${args}`,
        check ? ['--check'] : [],
      );
    const holds = async () =>
      ((await (await fetch(`${url('agent_b')}/v1/holds`)).json()) as { holds: { reason: string }[] }).holds;
    const restore = await activeKind('agent_b');
    const take = 'plan=power-saver duration=1h reason=ansible-test';
    const dry = await hold(take, true);
    assert.match(dry.stdout, /^agent_b \| CHANGED/m, dry.stdout);
    assert.deepEqual(await holds(), []);
    const first = await hold(take);
    assert.match(first.stdout, /^agent_b \| CHANGED/m, first.stdout);
    assert.equal(await activeKind('agent_b'), 'power-saver');
    const second = await hold(take);
    assert.match(second.stdout, /^agent_b \| SUCCESS/m, second.stdout);
    assert.equal((await holds()).length, 1);
    // A hold for another plan while this one is in force: the service's 409, as msg.
    const clash = await hold('plan=balanced duration=1h reason=other');
    assert.match(clash.stdout, /^agent_b \| FAILED!/m);
    assert.match(clash.stdout, /"code": "conflict"/);
    const release = await hold('state=absent reason=ansible-test');
    assert.match(release.stdout, /^agent_b \| CHANGED/m, release.stdout);
    assert.match(release.stdout, new RegExp(`"restored": \\{[^}]*"kind": "${restore}"`, 's'));
    assert.deepEqual(await holds(), []);
    assert.equal(await activeKind('agent_b'), restore);
    const again = await hold('state=absent reason=ansible-test');
    assert.match(again.stdout, /^agent_b \| SUCCESS/m, again.stdout);
  });

  it('without a readable credential (no become) the default mode reads but refuses a change', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const before = await activeKind('agent_b');
    const r = await site([
      '--limit',
      'agent_b',
      '-e',
      `powerplan_state_dir=${join(dir.dir, 'no-credential-here')}`,
      '-e',
      'powerplan_apply=true',
      '-e',
      `powerplan_plan=${before === 'balanced' ? 'power-saver' : 'balanced'}`,
    ]);
    assert.equal(r.recap.agent_b.failed, 1, r.output);
    const f = failure(r.output, 'agent_b');
    assert.equal(f.status, 403);
    assert.match(f.msg, /needs the 'control' scope; the caller 'local' does not have it/);
    assert.match(
      r.output,
      /TASK \[powerplan\.powerplan\.powerplan : Read the active power plan[^\n]*\n(ok|changed): \[agent_b\]/,
    );
    assert.equal(await activeKind('agent_b'), before);
  });

  it('the benchmark (powerplan_benchmark) picks the credential up too, and every change is audited as local-admin', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const stored = async () =>
      ((await (await fetch(`${url('agent_b')}/v1/benchmarks`)).json()) as { total: number }).total;
    const before = await stored();
    const r = await site([
      '--limit',
      'agent_b',
      '-e',
      'powerplan_benchmark=true',
      '-e',
      'powerplan_benchmark_force=true',
      '-e',
      'powerplan_recommend=false',
    ]);
    assert.equal(r.recap.agent_b.failed, 0, r.output);
    assert.doesNotMatch(r.output, /pp_[A-Za-z0-9_-]{43}/, 'the credential is never printed');
    assert.equal(await stored(), before + 1);
    const audit = (await agents.agent_b!.deps.deps.store.readLines('audit.jsonl')) as {
      caller: string;
      result: string;
    }[];
    const callers = new Set(audit.filter((a) => a.result === 'changed').map((a) => a.caller));
    assert.deepEqual([...callers], ['local-admin'], 'every change the role made was made as local-admin');
  });
});
