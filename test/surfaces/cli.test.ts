import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ActivePlan, PlanList, SetPlanResult, SystemInfo } from '../../src/domain/schemas.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { depsPerBlock } from '../support/fixture.ts';
import { runCli, startServer } from '../support/processes.ts';

describe('CLI as a child process', () => {
  const t = depsPerBlock();

  it('system --json prints the REST shape', async () => {
    const r = await runCli(['system', '--json'], t.env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(SystemInfo.parse(JSON.parse(r.stdout)).backend.name, 'simulated');
  });

  it('plans prints a readable list with the active plan marked', async () => {
    const r = await runCli(['plans'], t.env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^\\* ${SCHEME.balanced}\\s+Balanced`, 'm'));
    const json = PlanList.parse(JSON.parse((await runCli(['plans', '--json'], t.env)).stdout));
    assert.equal(json.activePlanId, SCHEME.balanced);
  });

  it('set --dry-run changes nothing; set changes and survives a new process', async () => {
    const dry = await runCli(['set', 'high-performance', '--dry-run'], t.env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /Would switch from Balanced/);
    assert.equal(
      ActivePlan.parse(JSON.parse((await runCli(['active', '--json'], t.env)).stdout)).plan?.id,
      SCHEME.balanced,
    );

    const set = await runCli(['set', 'high-performance', '--json'], t.env);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(SetPlanResult.parse(JSON.parse(set.stdout)).changed, true);
    const active = await runCli(['active'], t.env);
    assert.match(active.stdout, /High performance/);
    assert.match(active.stdout, /Minimum processor state\s+AC 100%/);
  });

  it('a failure prints the detail and exits 1 (with problem JSON under --json)', async () => {
    const r = await runCli(['set', 'no-such-plan'], t.env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not found; available:/);
    const j = await runCli(['set', 'no-such-plan', '--json'], t.env);
    assert.equal(j.code, 1);
    assert.equal(JSON.parse(j.stdout).code, 'not_found');
  });

  it('usage errors exit 2: unknown command, unknown flag, missing argument', async () => {
    for (const args of [['frobnicate'], ['plans', '--bogus'], ['set'], ['active', 'extra']]) {
      const r = await runCli(args, t.env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /powerplan: /);
    }
  });

  it('a command group alone lists its commands: help exits 0, a missing or unknown command 2', async () => {
    const help = await runCli(['fleet', '--help'], t.env);
    assert.equal(help.code, 0, help.stderr);
    for (const c of ['fleet status', 'fleet set <plan>', 'fleet hosts'])
      assert.ok(help.stdout.includes(c), c);
    assert.ok(!help.stdout.includes('token create'), 'only the fleet commands');
    for (const args of [['fleet'], ['token', 'frobnicate']]) {
      const r = await runCli(args, t.env);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(
        r.stderr,
        args.length === 1 ? /'fleet' needs a command/ : /unknown command 'token frobnicate'/,
      );
      assert.match(r.stderr, new RegExp(`powerplan ${args[0]} <command> --help`));
    }
  });

  it('a list flag takes comma-separated values (compare --plans a,b)', async () => {
    const r = await runCli(['compare', '--plans', 'power-saver, balanced', '--dry-run', '--json'], t.env);
    assert.equal(r.code, 0, r.stderr);
    const planned = (JSON.parse(r.stdout) as { planned: { id: string }[] }).planned.map((p) => p.id);
    assert.ok(planned.includes(SCHEME.powerSaver) && planned.includes(SCHEME.balanced), planned.join());
    // Also in brackets, as the option's description writes it ([50, 200, 1000]).
    const bracketed = await runCli(
      ['compare', '--plans', '[power-saver, balanced]', '--dry-run', '--json'],
      t.env,
    );
    assert.equal(bracketed.code, 0, bracketed.stderr);
    assert.equal((JSON.parse(bracketed.stdout) as { planned: unknown[] }).planned.length, planned.length);
    const bad = await runCli(['bench', '--idle-gaps-ms', '50,abc'], t.env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--idle-gaps-ms/);
  });

  it('invalid configuration exits 2 naming the variable', async () => {
    const r = await runCli(['active'], { ...t.env, POWERPLAN_BACKEND: 'beos' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /POWERPLAN_BACKEND/);
  });

  it('--help lists the commands; <command> --help lists its options', async () => {
    const r = await runCli(['--help'], t.env);
    assert.equal(r.code, 0);
    for (const word of ['system', 'plans', 'active', 'set <plan>', 'serve', 'openapi'])
      assert.ok(r.stdout.includes(word), word);
    const s = await runCli(['set', '--help'], t.env);
    assert.match(s.stdout, /--dry-run/);
  });

  it('serve answers over HTTP with the state the CLI left, and stops on SIGTERM', async () => {
    const server = await startServer(t.env);
    try {
      const res = await fetch(`${server.url}/v1/plans/active`);
      assert.equal(res.status, 200);
      assert.equal(ActivePlan.parse(await res.json()).plan?.id, SCHEME.highPerformance);
      const doc = await (await fetch(`${server.url}/openapi.json`)).json();
      assert.equal(doc.openapi, '3.1.0');
    } finally {
      // Windows has no SIGTERM: kill() there ends the process at once (no exit code); a service
      // stops through its wrapper's Ctrl+C instead.
      assert.equal(await server.stop('SIGTERM'), process.platform === 'win32' ? null : 0);
    }
  });
});
