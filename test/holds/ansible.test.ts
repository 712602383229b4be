/**
 * The role's hold tasks (integrations/ansible/roles/powerplan/tasks/hold.yml) through the example
 * playbook against a real `powerplan serve`: the maintenance tasks run under the held plan, and the
 * release in `always:` restores the previous plan, also when a maintenance task fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditRecord } from '../../src/domain/audit.ts';
import {
  ansibleInstall as install,
  prepareAnsible,
  requireTool,
  run,
  runPlaybook,
} from '../integrations/tools.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { type ServerProcess, startServer } from '../support/processes.ts';

describe('Ansible: a maintenance window under a hold', () => {
  let t: TestDeps;
  let server: ServerProcess | undefined;
  let available = false;

  // No token configured: as root the role calls through the service's control socket
  // (its state directory is the test's, so the role is told where that is).
  const playbook = (extra: string[]) =>
    runPlaybook(t.dir, 'hold-maintenance-window.yml', server!.url, [
      '-e',
      `powerplan_state_dir=${t.dir}`,
      ...extra,
    ]);

  const activeKind = async () =>
    ((await (await fetch(`${server!.url}/v1/plans/active`)).json()) as { plan: { kind: string } }).plan.kind;

  const holdOperations = async () =>
    (await t.deps.store.readLines('audit.jsonl'))
      .map((l) => AuditRecord.parse(l))
      .filter((a) => a.operation === 'hold_power_plan' || a.operation === 'hold_restore')
      .map((a) => `${a.operation}:${a.result}`);

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

  it('runs the tasks under High performance and restores Balanced afterwards', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    assert.equal(await activeKind(), 'balanced');
    const r = await playbook([]);
    const output = `${r.stdout}\n${r.stderr}`;
    assert.equal(r.code, 0, output);
    assert.match(output, /window plan: high-performance/);
    assert.equal(await activeKind(), 'balanced');
    assert.deepEqual(await holdOperations(), ['hold_power_plan:changed', 'hold_restore:restored']);
  });

  it('still releases the hold when a maintenance task fails', async (ctx) => {
    if (!requireTool(ctx, available, 'ansible-playbook', install)) return;
    const r = await playbook(['-e', 'maintenance_command=false']);
    const output = `${r.stdout}\n${r.stderr}`;
    assert.notEqual(r.code, 0, output);
    assert.match(output, /Release the hold/);
    assert.equal(await activeKind(), 'balanced');
    const holds = (await (await fetch(`${server!.url}/v1/holds`)).json()) as { holds: unknown[] };
    assert.deepEqual(holds.holds, []);
    assert.deepEqual((await holdOperations()).slice(-2), [
      'hold_power_plan:changed',
      'hold_restore:restored',
    ]);
  });
});
