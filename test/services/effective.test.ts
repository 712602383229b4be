/**
 * Requested versus effective: after every switch the settings are read back, and a change that
 * did not fully take effect is reported. Each fault (a setting that does not stick, a group policy
 * pinning one setting, an option the system ignores) is seen through REST, MCP and the CLI on the
 * simulated backend, and at the source in the Windows emulators and the tuned emulator.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Effective } from '../../src/domain/idle.ts';
import { localCaller } from '../../src/domain/scopes.ts';
import type { PowerBackend } from '../../src/platform/backend.ts';
import { defaultSimulatedState } from '../../src/platform/simulated/simulated-state.ts';
import { SCHEME, SETTING } from '../../src/platform/windows/well-known.ts';
import { createMcpServer } from '../../src/surfaces/mcp/server.ts';
import { S } from '../emulators/win-emu-state.mjs';
import { build, cpufreqTree, intelPstateTree } from '../platform/linux/harness.ts';
import { emulate } from '../platform/windows/emulator.ts';
import { readAdminToken, runCli } from '../support/processes.ts';
import { servedInProcess } from '../support/server.ts';

interface SetAnswer {
  changed: boolean;
  warnings?: string[];
  effective?: Effective;
}

const faults = {
  'a setting that does not stick': {
    faults: { nonSticky: { minStatePercent: { ac: 5, dc: 5 } }, policySettings: {}, ignoredOptions: [] },
    setting: 'minStatePercent.ac',
    wanted: 100,
    got: 5,
    cause: /did not stick/,
  },
  'a group policy pinning one setting': {
    faults: { nonSticky: {}, policySettings: { idleDisable: { ac: 1, dc: 1 } }, ignoredOptions: [] },
    setting: 'idleDisable.ac',
    wanted: 0,
    got: 1,
    cause: /group policy/,
  },
  'an option the system ignores': {
    faults: { nonSticky: {}, policySettings: {}, ignoredOptions: [{ option: 'min_pef_pct', wanted: '100' }] },
    setting: 'min_pef_pct',
    wanted: '100',
    got: null,
    cause: /misspelled/,
  },
} as const;

/** What every surface must say about the fault: changed, but with the mismatch and a warning. */
const expectMismatch = (answer: SetAnswer, f: (typeof faults)[keyof typeof faults], surface: string) => {
  assert.equal(answer.changed, true, `${surface}: the plan did change`);
  assert.equal(answer.effective?.checked, true, surface);
  assert.equal(answer.effective?.matches, false, surface);
  const m = answer.effective?.mismatches.find((x) => x.setting === f.setting);
  assert.ok(m, `${surface}: ${f.setting} is named`);
  assert.equal(m.wanted, f.wanted);
  assert.equal(m.got, f.got);
  assert.match(m.cause, f.cause);
  assert.ok(
    answer.warnings?.some((w) => w.includes(f.setting)),
    `${surface}: a warning names ${f.setting}`,
  );
};

for (const [name, f] of Object.entries(faults)) {
  describe(`read-back after a switch: ${name}`, () => {
    const served = servedInProcess({
      prepare: async (t) => {
        await writeFile(
          join(t.dir, 'simulated-backend.json'),
          JSON.stringify({ ...defaultSimulatedState(), faults: f.faults }),
        );
      },
    });
    let client: Client;
    before(async () => {
      const server = createMcpServer(served.t.deps, localCaller);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(clientSide);
    });
    after(() => client.close());

    const rest = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${served.server.url}${path}`, {
        method,
        // Changes need the local administrator credential; reads do not.
        headers: {
          authorization: `Bearer ${readAdminToken(served.t.dir)}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    };

    it('REST answers the mismatch, the active plan keeps it and the audit records it', async () => {
      const r = await rest('PUT', '/v1/plans/active', { plan: 'high-performance' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      expectMismatch(r.body as unknown as SetAnswer, f, 'REST');
      const active = await rest('GET', '/v1/plans/active');
      assert.equal(
        (active.body.effective as Effective | undefined)?.matches,
        false,
        'shown with the plan in force',
      );
      const audit = await rest('GET', '/v1/audit?limit=5');
      const records = audit.body.records as { result: string; mismatches?: { setting: string }[] }[];
      assert.ok(
        records.some((x) => x.result === 'changed' && x.mismatches?.some((m) => m.setting === f.setting)),
        'audited with the mismatch',
      );
      await rest('PUT', '/v1/plans/active', { plan: 'balanced' });
    });

    it('MCP answers the mismatch in the structured result and a warning', async () => {
      const r = await client.callTool({ name: 'set_power_plan', arguments: { plan: 'high-performance' } });
      assert.notEqual(r.isError, true, JSON.stringify(r.content));
      expectMismatch(r.structuredContent as unknown as SetAnswer, f, 'MCP');
      await client.callTool({ name: 'set_power_plan', arguments: { plan: 'balanced' } });
    });

    it('the CLI prints the mismatch for people and in --json', async () => {
      const env = served.t.env;
      const json = await runCli(['set', 'high-performance', '--json'], env);
      assert.equal(json.code, 0, json.stderr);
      expectMismatch(JSON.parse(json.stdout) as SetAnswer, f, 'CLI --json');
      await runCli(['set', 'balanced'], env);
      const text = await runCli(['set', 'high-performance'], env);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /not in force/);
      assert.match(text.stdout, new RegExp(`Warning: .*${f.setting}`));
      const active = await runCli(['active'], env);
      assert.match(active.stdout, /NOT in force/);
    });
  });
}

describe('read-back without faults', () => {
  const served = servedInProcess();
  it('a clean switch reads back every checked setting as in force, and says so', async () => {
    const r = await fetch(`${served.server.url}/v1/plans/active`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${readAdminToken(served.t.dir)}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ plan: 'high-performance' }),
    });
    const body = (await r.json()) as SetAnswer;
    assert.equal(body.effective?.matches, true);
    assert.ok((body.effective?.settings.length ?? 0) >= 10);
    assert.equal(body.warnings, undefined);
  });
});

/**
 * Makes a machine, switches it to `plan`, reads the switch back and hands the read-back and the
 * machine to `fn`; the machine is cleaned up whatever `fn` does.
 */
const switchedTo = async <M extends { backend: PowerBackend; cleanup: () => Promise<unknown> }>(
  made: Promise<M>,
  plan: string,
  fn: (e: Effective, machine: M) => Promise<void> = async () => {},
): Promise<Effective> => {
  const machine = await made;
  try {
    await machine.backend.setActive(plan);
    const e = await machine.backend.checkEffective!(plan);
    await fn(e, machine);
    return e;
  } finally {
    await machine.cleanup();
  }
};

describe('read-back at the source: the Windows emulators', () => {
  it('a value the active scheme reports differently is a setting that did not stick', async () => {
    await switchedTo(
      emulate({
        change: (s) => {
          s.nonSticky = { [S.minState]: [5, 5] };
        },
      }),
      SCHEME.highPerformance,
      async (e, emu) => {
        assert.equal(e.matches, false);
        assert.deepEqual(
          e.mismatches.map((m) => [m.setting, m.wanted, m.got]),
          [
            ['minStatePercent.ac', 100, 5],
            ['minStatePercent.dc', 100, 5],
          ],
        );
        assert.match(e.mismatches[0]!.cause, /did not stick/);
        assert.ok((await emu.calls('/qh')).some((a) => a[1] === 'SCHEME_CURRENT'));
      },
    );
  });

  it('a group policy on one setting is read from the registry and named as the cause', async () => {
    const e = await switchedTo(
      emulate({
        change: (s) => {
          s.policySettings = { [S.idleDisable]: [1, 1] };
        },
      }),
      SCHEME.highPerformance,
    );
    const m = e.mismatches.find((x) => x.setting === 'idleDisable.ac');
    assert.equal(m?.got, 1);
    assert.match(m?.cause ?? '', new RegExp(`group policy.*${SETTING.idleDisable}`));
    const plain = await emulate();
    try {
      assert.equal((await plain.backend.checkEffective!(SCHEME.balanced)).matches, true);
    } finally {
      await plain.cleanup();
    }
  });
});

describe('read-back at the source: tuned', () => {
  const profiles = [
    { name: 'latency-performance', description: 'Optimize for deterministic performance' },
    { name: 'balanced', description: 'General non-specialized tuned profile' },
  ];
  const sysfs = {
    tree: cpufreqTree(2, () => ({ scaling_driver: 'acpi-cpufreq', scaling_governor: 'performance' })),
  };
  const tuned = (extra: object = {}) => build({ sysfs, tuned: { active: 'balanced', profiles, ...extra } });

  it('an option tuned ignores (misspelled in the profile) is a mismatch even when verify passes', async () => {
    await switchedTo(
      tuned({ ignoredOptions: { 'latency-performance': [['min_pef_pct', 'CPULatencyPlugin']] } }),
      'latency-performance',
      async (e, b) => {
        assert.deepEqual(
          e.mismatches.map((m) => m.setting),
          ['min_pef_pct'],
        );
        assert.match(e.mismatches[0]!.cause, /misspelled/);
        assert.ok((await b.calls('tuned-adm')).some((a) => a[0] === 'verify'));
      },
    );
  });

  it('a value tuned verify finds changed back is a mismatch with what it wanted and got', async () => {
    const e = await switchedTo(
      tuned({
        notSticking: [{ device: 'cpu0', name: 'governor', got: 'powersave', expected: 'performance' }],
      }),
      'latency-performance',
    );
    assert.deepEqual(
      e.mismatches.map((m) => [m.setting, m.wanted, m.got]),
      [['governor (cpu0)', 'performance', 'powersave']],
    );
    assert.equal((await switchedTo(tuned(), 'latency-performance')).matches, true);
  });
});

describe('read-back at the source: frequency limits and turbo on Linux', () => {
  /** An intel_pstate machine without a daemon (sysfs owns the policy), with `extra` over its knobs. */
  const machine = (extra: Record<string, string> = {}) =>
    build({ sysfs: { tree: { ...intelPstateTree(2), ...extra } } });
  const cpu0 = 'devices/system/cpu/cpu0/cpufreq';
  const pstate = 'devices/system/cpu/intel_pstate';

  it('a full-speed plan reads back the frequency cap, the performance cap and turbo, and finds each that holds it back', async () => {
    const e = await switchedTo(
      machine({
        [`${cpu0}/scaling_max_freq`]: '2000000',
        [`${pstate}/max_perf_pct`]: '60',
        [`${pstate}/no_turbo`]: '1',
      }),
      'performance',
    );
    assert.equal(e.matches, false);
    assert.deepEqual(
      e.mismatches.map((m) => [m.setting, m.wanted, m.got]),
      [
        ['maxFrequency', '4000000 kHz (cpuinfo_max_freq)', '2000000 kHz on 1 of 2 CPUs'],
        ['maxPerfPct', 100, 60],
        ['turbo', 'allowed', 'off (intel_pstate/no_turbo = 1)'],
      ],
    );
    assert.match(e.mismatches[2]!.cause, /firmware/);
  });

  it('with nothing capped the same read-back matches, and a plan that saves power is not held to full speed', async () => {
    const clean = await switchedTo(machine(), 'performance');
    assert.equal(clean.matches, true, JSON.stringify(clean.mismatches));
    for (const s of ['maxFrequency', 'maxPerfPct', 'turbo']) assert.ok(clean.settings.includes(s), s);
    const saving = await switchedTo(machine({ [`${pstate}/no_turbo`]: '1' }), 'powersave:power');
    assert.deepEqual(saving.mismatches, []);
    assert.ok(!saving.settings.includes('turbo'));
  });

  it('turbo read from cpufreq/boost where intel_pstate is absent (acpi-cpufreq)', async () => {
    const tree = cpufreqTree(
      2,
      () => ({
        scaling_driver: 'acpi-cpufreq',
        scaling_governor: 'ondemand',
        scaling_available_governors: 'performance ondemand powersave',
        scaling_max_freq: '3000000',
        cpuinfo_max_freq: '3000000',
      }),
      { 'devices/system/cpu/cpufreq/boost': '0' },
    );
    const e = await switchedTo(build({ sysfs: { tree } }), 'performance');
    assert.deepEqual(
      e.mismatches.map((m) => [m.setting, m.got]),
      [['turbo', 'off (cpufreq/boost = 0)']],
    );
  });
});
