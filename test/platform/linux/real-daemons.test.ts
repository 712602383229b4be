/**
 * The Linux backend against Debian's real daemons (tuned 2.20, power-profiles-daemon 0.12), each
 * with its own system bus in a private mount and PID namespace, driven through `powerplan serve`:
 * list, active, set, hold and desired state, each checked against the daemon's own tool. tuned
 * runs only with plugin-free profiles, and the machine's sysctls and block-device settings are
 * compared before and after. What these versions cannot show (newer daemons' output, a stopped
 * daemon, a polkit refusal) stays in daemons.test.ts with the stand-ins.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { requireTool } from '../../integrations/tools.ts';
import { install, missing, type Namespace, startNamespace, TUNED_PROFILES } from './real-daemons.ts';

interface Plan {
  id: string;
  kind: string;
  active: boolean;
}
interface PlanList {
  backend: string;
  activePlanId: string;
  plans: Plan[];
}
interface Active {
  plan: Plan | null;
  owner: string;
  canSet: boolean;
}
interface SetResult {
  changed: boolean;
  before: Plan;
  after: Plan;
}

const why = missing();
const available = (t: TestContext) => requireTool(t, why === null, `real daemons (${why})`, install);

/** Every readable file under the given dirs, path -> content: what tuned's real profiles would change. */
const snapshot = (): Map<string, string> => {
  const files = new Map<string, string>();
  const add = (dir: string, filter: (name: string) => boolean = () => true) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names.filter(filter)) {
      try {
        files.set(join(dir, name), readFileSync(join(dir, name), 'utf8'));
      } catch {
        // write-only (vm/drop_caches, vm/compact_memory) or a directory
      }
    }
  };
  add('/proc/sys/vm');
  add('/proc/sys/kernel', (n) => n.startsWith('sched') || n === 'numa_balancing' || n === 'nmi_watchdog');
  add('/sys/kernel/mm/transparent_hugepage');
  for (const dev of readdirSync('/sys/block')) add(join('/sys/block', dev, 'queue'));
  for (const cpu of readdirSync('/sys/devices/system/cpu').filter((n) => /^cpu\d+$/.test(n))) {
    add(
      join('/sys/devices/system/cpu', cpu, 'cpufreq'),
      (n) => n.startsWith('scaling_') && n !== 'scaling_cur_freq',
    );
  }
  add('/etc/tuned');
  return files;
};

/** Polls the service until `check` holds: the desired-state checker runs on its own clock. */
const eventually = async <T>(what: string, get: () => Promise<T>, check: (v: T) => boolean): Promise<T> => {
  const end = Date.now() + 30_000;
  for (;;) {
    const v = await get();
    if (check(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: still ${JSON.stringify(v)} after 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

describe('linux backend against the real tuned 2.20 (plugin-free profiles, private namespace)', () => {
  let ns: Namespace | undefined;
  let machineBefore: Map<string, string> | undefined;
  const tunedActive = async () => {
    const r = await ns!.run('tuned-adm', 'active');
    assert.equal(r.code, 0, r.stderr);
    return /Current active profile: (.*)/.exec(r.stdout)?.[1]?.trim();
  };

  before(async () => {
    if (why !== null) return;
    machineBefore = snapshot();
    ns = await startNamespace('tuned');
  });
  after(async () => {
    await ns?.stop();
  });

  it('lists the profiles tuned offers, classified by kind, the active one marked', async (t) => {
    if (!available(t)) return;
    const list = await ns!.api<PlanList>('GET', '/v1/plans');
    assert.equal(list.backend, 'linux');
    assert.deepEqual(list.plans.map((p) => p.id).sort(), [...TUNED_PROFILES].sort());
    assert.equal(list.activePlanId, 'balanced');
    const kind = Object.fromEntries(list.plans.map((p) => [p.id, p.kind]));
    assert.deepEqual(kind, {
      balanced: 'balanced',
      'throughput-performance': 'high-performance',
      'latency-performance': 'high-performance',
      'virtual-guest': 'high-performance',
      powersave: 'power-saver',
    });
    // Preference order: throughput-performance answers the high-performance alias.
    assert.equal(list.plans.find((p) => p.kind === 'high-performance')?.id, 'throughput-performance');
  });

  it('answers the active profile with tuned as the owner', async (t) => {
    if (!available(t)) return;
    const active = await ns!.api<Active>('GET', '/v1/plans/active');
    assert.equal(active.owner, 'tuned');
    assert.equal(active.canSet, true);
    assert.equal(active.plan?.id, 'balanced');
    assert.equal(await tunedActive(), 'balanced');
  });

  it('sets a profile by id and by kind alias; tuned-adm agrees; setting it again changes nothing', async (t) => {
    if (!available(t)) return;
    const r = await ns!.api<SetResult>('PUT', '/v1/plans/active', { plan: 'high-performance' });
    assert.equal(r.changed, true);
    assert.equal(r.before.id, 'balanced');
    assert.equal(r.after.id, 'throughput-performance');
    assert.equal(await tunedActive(), 'throughput-performance');
    const again = await ns!.api<SetResult>('PUT', '/v1/plans/active', { plan: 'throughput-performance' });
    assert.equal(again.changed, false);
    const saver = await ns!.api<SetResult>('PUT', '/v1/plans/active', { plan: 'powersave' });
    assert.equal(saver.after.id, 'powersave');
    assert.equal(await tunedActive(), 'powersave');
    assert.equal((await ns!.api<Active>('GET', '/v1/plans/active')).plan?.id, 'powersave');
  });

  it('refuses a profile tuned does not have and changes nothing', async (t) => {
    if (!available(t)) return;
    const problem = await ns!.api<{ detail: string }>('PUT', '/v1/plans/active', { plan: 'desktop' }, 404);
    assert.match(problem.detail, /Plan 'desktop' not found; available: .*balanced/);
    assert.equal(await tunedActive(), 'powersave');
  });

  it('holds a profile and restores the one before when the hold is released', async (t) => {
    if (!available(t)) return;
    const held = await ns!.api<{ hold: { id: string }; changed: boolean; restorePlanId: string }>(
      'POST',
      '/v1/holds',
      { plan: 'latency-performance', durationSeconds: 600, reason: 'index rebuild' },
      201,
    );
    assert.equal(held.changed, true);
    assert.equal(held.restorePlanId, 'powersave');
    assert.equal(await tunedActive(), 'latency-performance');
    const list = await ns!.api<{ heldPlanId: string }>('GET', '/v1/holds');
    assert.equal(list.heldPlanId, 'latency-performance');
    await ns!.api('DELETE', `/v1/holds/${held.hold.id}`);
    assert.equal(await tunedActive(), 'powersave');
  });

  it('desired state: a change made with tuned-adm behind the service is seen as drift and set back', async (t) => {
    if (!available(t)) return;
    const set = await ns!.api<{ planId: string; enforce: boolean }>('PUT', '/v1/desired', {
      plan: 'balanced',
      enforce: true,
    });
    assert.equal(set.planId, 'balanced');
    await eventually('the desired plan in force', tunedActive, (p) => p === 'balanced');
    const r = await ns!.run('tuned-adm', 'profile', 'virtual-guest');
    assert.equal(r.code, 0, r.stderr);
    const state = await eventually(
      'the drift corrected',
      () => ns!.api<{ correctedTotal: number; driftTotal: number }>('GET', '/v1/desired'),
      (d) => d.correctedTotal >= 1,
    );
    assert.ok(state.driftTotal >= 1);
    assert.equal(await tunedActive(), 'balanced');
    await ns!.api('PUT', '/v1/desired', { plan: null });
  });

  it("leaves the machine's sysctls, block queue settings and /etc/tuned as they were", async (t) => {
    if (!available(t)) return;
    await ns!.stop();
    ns = undefined;
    const now = snapshot();
    assert.ok(machineBefore!.size > 50, `only ${machineBefore!.size} settings read`);
    const changed = [...machineBefore!].filter(([path, v]) => now.get(path) !== v).map(([path]) => path);
    assert.deepEqual(changed, []);
  });
});

describe('linux backend against the real power-profiles-daemon 0.12 (fake driver, private namespace)', () => {
  let ns: Namespace | undefined;
  const ppdGet = async () => {
    const r = await ns!.run('powerprofilesctl', 'get');
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trim();
  };

  before(async () => {
    if (why !== null) return;
    ns = await startNamespace('power-profiles-daemon');
  });
  after(async () => {
    await ns?.stop();
  });

  it('lists the three profiles of the fake driver and the active one', async (t) => {
    if (!available(t)) return;
    const list = await ns!.api<PlanList>('GET', '/v1/plans');
    assert.deepEqual(
      list.plans.map((p) => [p.id, p.kind]),
      [
        ['performance', 'high-performance'],
        ['balanced', 'balanced'],
        ['power-saver', 'power-saver'],
      ],
    );
    const active = await ns!.api<Active>('GET', '/v1/plans/active');
    assert.equal(active.owner, 'power-profiles-daemon');
    assert.equal(active.plan?.id, await ppdGet());
  });

  it('sets profiles by alias and by id; powerprofilesctl agrees', async (t) => {
    if (!available(t)) return;
    const r = await ns!.api<SetResult>('PUT', '/v1/plans/active', { plan: 'high-performance' });
    assert.equal(r.after.id, 'performance');
    assert.equal(await ppdGet(), 'performance');
    const dry = await ns!.api<SetResult>('PUT', '/v1/plans/active', { plan: 'power-saver', dryRun: true });
    assert.equal(dry.changed, true);
    assert.equal(await ppdGet(), 'performance');
    await ns!.api<SetResult>('PUT', '/v1/plans/active', { plan: 'power-saver' });
    assert.equal(await ppdGet(), 'power-saver');
  });

  it('holds performance and restores power-saver on release', async (t) => {
    if (!available(t)) return;
    const held = await ns!.api<{ hold: { id: string } }>(
      'POST',
      '/v1/holds',
      { plan: 'performance', for: '10m' },
      201,
    );
    assert.equal(await ppdGet(), 'performance');
    await ns!.api('DELETE', `/v1/holds/${held.hold.id}`);
    assert.equal(await ppdGet(), 'power-saver');
  });

  it('desired state without enforcement: a change behind the service is counted as drift, not undone', async (t) => {
    if (!available(t)) return;
    await ns!.api('PUT', '/v1/desired', { plan: 'power-saver', enforce: false });
    const r = await ns!.run('powerprofilesctl', 'set', 'balanced');
    assert.equal(r.code, 0, r.stderr);
    const state = await eventually(
      'the drift seen',
      () => ns!.api<{ status: string; driftTotal: number; activePlanId: string }>('GET', '/v1/desired'),
      (d) => d.driftTotal >= 1,
    );
    assert.equal(state.status, 'drift');
    assert.equal(state.activePlanId, 'balanced');
    assert.equal(await ppdGet(), 'balanced');
  });
});
