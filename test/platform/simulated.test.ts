import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Store } from '../../src/lib/store.ts';
import { createSimulatedBackend } from '../../src/platform/simulated/simulated-backend.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { backendContract } from './backend-contract.ts';

const fresh = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'powerplan-sim-'));
  return {
    dir,
    backend: createSimulatedBackend({ store: new Store(dir) }),
    cleanup: () => rm(dir, { recursive: true }),
  };
};

backendContract('simulated', fresh, { settable: true });

describe('simulated backend', () => {
  it('starts as a stock Windows Server: Balanced active with a 5% minimum processor state', async () => {
    const { backend, cleanup } = await fresh();
    const active = await backend.getActive();
    assert.equal(active.plan?.id, SCHEME.balanced);
    assert.deepEqual(active.processor.minStatePercent, { ac: 5, dc: 5 });
    assert.deepEqual(
      (await backend.listPlans()).map((p) => p.kind),
      ['balanced', 'high-performance', 'power-saver'],
    );
    await cleanup();
  });

  it('keeps a change across a new instance over the same state directory', async () => {
    const { dir, backend, cleanup } = await fresh();
    await backend.setActive(SCHEME.highPerformance);
    const again = createSimulatedBackend({ store: new Store(dir) });
    assert.equal((await again.getActive()).plan?.id, SCHEME.highPerformance);
    await cleanup();
  });

  it('seeded as policy-managed: the active plan carries the policy-managed note', async () => {
    const { dir, backend, cleanup } = await fresh();
    await backend.setActive(SCHEME.balanced);
    const path = join(dir, 'simulated-backend.json');
    await writeFile(
      path,
      JSON.stringify({ ...JSON.parse(await readFile(path, 'utf8')), policyManaged: true }),
    );
    const active = await backend.getActive();
    assert.equal(active.owner, 'group-policy');
    assert.deepEqual(
      active.notes?.map((n) => n.code),
      ['policy-managed'],
    );
    assert.match(active.warnings?.[0] ?? '', /group policy/);
    await cleanup();
  });

  it('creates Ultimate Performance with a new id', async () => {
    const { backend, cleanup } = await fresh();
    assert.deepEqual(
      backend.templates!().map((t) => [t.kind, t.id]),
      [
        ['ultimate-performance', SCHEME.ultimateTemplate],
        ['high-performance', SCHEME.highPerformance],
      ],
      'it announces what it can create, named by the template',
    );
    const created = await backend.createPlan!('ultimate-performance');
    assert.equal(created.kind, 'ultimate-performance');
    assert.notEqual(created.id, SCHEME.ultimateTemplate);
    assert.ok((await backend.listPlans()).some((p) => p.id === created.id));
    await cleanup();
  });
});
