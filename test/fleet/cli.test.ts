/**
 * `powerplan fleet ...` as a person or a script runs it: a child process against live agents,
 * the fleet named with --fleet or an Ansible inventory, tables for people, --json for scripts.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FleetSetResult, FleetStatus, PrometheusTargets } from '../../src/domain/fleet.ts';
import { ansibleInstall, requireTool, toolRuns } from '../integrations/tools.ts';
import { runCli } from '../support/processes.ts';
import { type FleetRig, fleetRig } from './rig.ts';

describe('powerplan fleet (CLI)', () => {
  let rig: FleetRig;
  let env: Record<string, string>;
  before(async () => {
    rig = await fleetRig(5);
    env = {
      POWERPLAN_BACKEND: 'simulated',
      POWERPLAN_STATE_DIR: join(rig.dir, 'cli-state'),
      POWERPLAN_FLEET_TIMEOUT_MS: '5000',
    };
  });
  after(() => rig?.cleanup());

  it('fleet status prints a table and the counts; --json prints the REST JSON', async () => {
    const table = await runCli(['fleet', 'status', '--fleet', rig.fleetFile], env);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^HOST\s+STATUS\s+PLAN\s+KIND\s+ADVICE\s+BURST\s+DRIFT\s+HOLDS/);
    assert.match(table.stdout, /agent1\s+ok\s+"Balanced"\s+balanced/);
    assert.match(table.stdout, /slow: Timed out: No answer within 5000 ms/);
    assert.match(table.stdout, /9 hosts: 6 ok, 2 unreachable, 1 unauthorized, 0 error/);
    const json = await runCli(['fleet', 'status', '--fleet', rig.fleetFile, '--tags', 'web', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const s = FleetStatus.parse(JSON.parse(json.stdout));
    assert.deepEqual(
      s.hosts.map((h) => h.name),
      ['agent2', 'agent4'],
    );
  });

  it('fleet set --dry-run changes nothing; a failed host makes the exit code 1', async () => {
    const dry = await runCli(
      [
        'fleet',
        'set',
        'high-performance',
        '--hosts',
        'agent1,readonly',
        '--dry-run',
        '--fleet',
        rig.fleetFile,
      ],
      env,
    );
    assert.equal(dry.code, 1, 'the read-only host refused');
    assert.match(dry.stdout, /agent1\s+would change\s+"Balanced" -> "High performance"/);
    assert.match(dry.stdout, /readonly\s+unauthorized/);
    assert.match(
      dry.stdout,
      /Dry run, nothing changed: 2 hosts: 1 would change, 0 already on the plan, 1 failed/,
    );
    assert.equal((await rig.agents[0]!.deps.backend.getActive()).plan?.kind, 'balanced');
    const done = await runCli(
      ['fleet', 'set', 'high-performance', '--hosts', 'agent1', '--json', '--fleet', rig.fleetFile],
      env,
    );
    assert.equal(done.code, 0, done.stderr);
    assert.equal(FleetSetResult.parse(JSON.parse(done.stdout)).summary.changed, 1);
    assert.equal((await rig.agents[0]!.deps.backend.getActive()).plan?.kind, 'high-performance');
    assert.equal((await rig.agents[1]!.deps.backend.getActive()).plan?.kind, 'balanced');
  });

  it('fleet hosts and fleet prometheus-targets; help; a missing fleet is a clear error', async () => {
    const hosts = await runCli(['fleet', 'hosts', '--fleet', rig.fleetFile], env);
    assert.equal(hosts.code, 0, hosts.stderr);
    assert.match(hosts.stdout, /agent1\s+http:\/\/127\.0\.0\.1:\d+\s+sql,prod\s+token\s+none/);
    assert.doesNotMatch(hosts.stdout, /pp_/);
    const targets = await runCli(
      ['fleet', 'prometheus-targets', '--fleet', rig.fleetFile, '--tags', 'sql'],
      env,
    );
    assert.equal(targets.code, 0, targets.stderr);
    assert.deepEqual(
      PrometheusTargets.shape.groups.parse(JSON.parse(targets.stdout)).map((g) => g.labels.fleet_host),
      ['agent1', 'agent3', 'agent5', 'wrongtoken'],
    );
    const help = await runCli(['fleet', 'set', '--help'], env);
    assert.match(help.stdout, /Usage: powerplan fleet set <plan>/);
    assert.match(help.stdout, /--dry-run/);
    const none = await runCli(['fleet', 'status'], env);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /No fleet is configured.*--fleet FILE/);
  });

  it('--ansible-inventory reads the hosts from an inventory', async (ctx) => {
    if (!requireTool(ctx, toolRuns('ansible-inventory'), 'ansible-inventory', ansibleInstall)) return;
    const inv = join(rig.dir, 'inventory.ini');
    const [a1, a2] = rig.agents;
    await writeFile(
      inv,
      `[sql]\nagent1 powerplan_url=${a1!.server.url} powerplan_token_file=${join(rig.dir, 'agent1.token')}\n` +
        `[web]\nagent2 powerplan_url=${a2!.server.url} powerplan_token_file=${join(rig.dir, 'agent2.token')}\n`,
    );
    const r = await runCli(['fleet', 'status', '--ansible-inventory', inv, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const s = FleetStatus.parse(JSON.parse(r.stdout));
    assert.deepEqual(s.hosts.map((h) => [h.name, h.status, h.tags]).sort(), [
      ['agent1', 'ok', ['sql']],
      ['agent2', 'ok', ['web']],
    ]);
  });
});
