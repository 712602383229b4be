/**
 * The Windows backend reading against the powercfg and reg emulators: the shared contract in two
 * locales, localized names and code pages, processor settings, /qh fallback, classification,
 * machine facts, and the single-flight figure (one powercfg run serves many callers).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ActivePlan } from '../../../src/domain/schemas.ts';
import { SCHEME } from '../../../src/platform/windows/well-known.ts';
import { S } from '../../emulators/win-emu-state.mjs';
import { backendContract } from '../backend-contract.ts';
import { emulate, withEmulated } from './emulator.ts';

backendContract('windows (powercfg emulator, en-US, code page 437)', () => emulate(), { settable: true });
backendContract(
  'windows (powercfg emulator, zh-CN, code page 936)',
  () => emulate({ locale: 'zh-CN', codepage: 936 }),
  { settable: true },
);

describe('windows backend: reading', () => {
  it('decodes localized names exactly, with the OEM code page read from the registry', async () => {
    for (const [locale, codepage, name] of [
      ['de-DE', 850, 'Höchstleistung'],
      ['zh-CN', 936, '高性能'],
      ['ko-KR', 949, '고성능'],
    ] as const) {
      await withEmulated({ locale, codepage }, async (emu) => {
        const plans = await emu.backend.listPlans();
        const hp = plans.find((p) => p.id === SCHEME.highPerformance);
        assert.equal(hp?.name, name, locale);
        assert.equal(hp?.kind, 'high-performance');
        assert.equal(hp?.kindSource, 'well-known-id');
        assert.deepEqual(
          (await emu.argv()).filter((e) => e.tool === 'reg').map((e) => e.argv.slice(1)),
          [['HKLM\\SYSTEM\\CurrentControlSet\\Control\\Nls\\CodePage', '/v', 'OEMCP']],
          'the code page was looked up once',
        );
      });
    }
  });

  it('prefers POWERPLAN_CODEPAGE over the registry', async () => {
    await withEmulated(
      {
        locale: 'de-DE',
        codepage: 850,
        change: (s) => {
          s.oemcp = 1251;
        },
      },
      async (emu) => {
        assert.ok((await emu.backend.listPlans()).some((p) => p.name === 'Höchstleistung'));
        assert.equal((await emu.argv()).filter((e) => e.tool === 'reg').length, 0);
      },
      { codepage: 850 },
    );
  });

  it('takes valid UTF-8 output as it is, without a code page lookup', async () => {
    await withEmulated({ locale: 'zh-CN', codepage: 65001 }, async (emu) => {
      assert.ok((await emu.backend.listPlans()).some((p) => p.name === '高性能'));
      assert.equal((await emu.argv()).filter((e) => e.tool === 'reg').length, 0);
    });
  });

  it('reports the processor settings of the active plan, hidden ones included through /qh', async () => {
    await withEmulated(
      {
        change: (s) => {
          s.active = SCHEME.highPerformance;
        },
      },
      async (emu) => {
        const active = ActivePlan.parse(await emu.backend.getActive());
        assert.equal(active.plan?.id, SCHEME.highPerformance);
        assert.equal(active.owner, 'powercfg');
        assert.equal(active.policyManaged, false);
        assert.equal(active.canSet, true);
        assert.equal(active.warnings, undefined);
        assert.equal(active.notes, undefined);
        assert.deepEqual(active.processor.minStatePercent, { ac: 100, dc: 100 });
        assert.deepEqual(active.processor.maxStatePercent, { ac: 100, dc: 100 });
        assert.deepEqual(active.processor.boostMode, { ac: 1, dc: 1 });
        assert.deepEqual(active.processor.epp, { ac: 0, dc: 0 });
        assert.deepEqual(active.processor.coreParkingMinCores, { ac: 100, dc: 100 });
        assert.deepEqual(active.processor.perfIncreaseThreshold, { ac: 30, dc: 30 });
        assert.deepEqual(active.processor.perfIncreaseTime, { ac: 1, dc: 1 });
        assert.deepEqual(await emu.calls('/qh'), [
          ['/qh', SCHEME.highPerformance, '54533251-82be-4824-96c1-47b60b740d00'],
        ]);
      },
    );
  });

  it('falls back to /query where /qh does not exist, and remembers it', async () => {
    await withEmulated(
      {
        change: (s) => {
          s.noQh = true;
        },
      },
      async (emu) => {
        const first = await emu.backend.getActive();
        assert.deepEqual(first.processor.minStatePercent, { ac: 5, dc: 5 });
        assert.equal(first.processor.boostMode, null, 'hidden without /qh');
        await emu.backend.setActive(SCHEME.powerSaver);
        assert.deepEqual((await emu.backend.getActive()).processor.maxStatePercent, { ac: 100, dc: 70 });
        assert.equal((await emu.calls('/qh')).length, 1, '/qh is tried once');
        assert.equal((await emu.calls('/query')).length, 2);
      },
    );
  });

  it('classifies custom and duplicated plans by personality, then by processor settings', async () => {
    const hpCopy = '11111111-2222-4333-8444-555555555555';
    const tuned = '22222222-2222-4333-8444-555555555555';
    const odd = '33333333-2222-4333-8444-555555555555';
    await withEmulated(
      {
        change: (s) => {
          const hp = s.plans.find((p) => p.guid === SCHEME.highPerformance)!;
          const balanced = s.plans.find((p) => p.guid === SCHEME.balanced)!;
          s.plans.push({ guid: hpCopy, name: 'Copy of High performance (SQL)', settings: hp.settings });
          s.plans.push({
            guid: tuned,
            name: 'Server (tuned)',
            settings: { ...balanced.settings, [S.minState]: [100, 100] },
          });
          const { [S.personality]: _, ...noPersonality } = balanced.settings;
          s.plans.push({ guid: odd, name: 'Old custom', settings: noPersonality });
        },
      },
      async (emu) => {
        const plans = await emu.backend.listPlans();
        const kind = (id: string) => {
          const p = plans.find((x) => x.id === id)!;
          return [p.kind, p.kindSource, p.builtin];
        };
        assert.deepEqual(kind(SCHEME.balanced), ['balanced', 'well-known-id', true]);
        assert.deepEqual(kind(hpCopy), ['high-performance', 'personality', false]);
        assert.deepEqual(
          kind(tuned),
          ['balanced', 'personality', false],
          'the personality wins over settings',
        );
        assert.deepEqual(kind(odd), ['custom', 'default', false]);
        assert.equal(plans.find((p) => p.id === hpCopy)?.name, 'Copy of High performance (SQL)');
        // The custom plans cost a query to classify; the built-in ones are known by GUID and queried
        // only for their processor settings, to tell an edited built-in plan.
        assert.deepEqual(
          new Set((await emu.calls('/qh')).map((a) => a[1])),
          new Set([hpCopy, tuned, odd, SCHEME.balanced, SCHEME.highPerformance, SCHEME.powerSaver]),
        );
        assert.ok(plans.filter((p) => p.builtin).every((p) => p.edited === false && !p.differences));
      },
    );
  });

  it('without /qh, a plan with a 100% minimum processor state is high-performance by its settings', async () => {
    const custom = '44444444-2222-4333-8444-555555555555';
    await withEmulated(
      {
        change: (s) => {
          s.noQh = true;
          const hp = s.plans.find((p) => p.guid === SCHEME.highPerformance)!;
          s.plans.push({ guid: custom, name: 'SQL', settings: hp.settings });
        },
      },
      async (emu) => {
        const p = (await emu.backend.listPlans()).find((x) => x.id === custom);
        assert.deepEqual([p?.kind, p?.kindSource], ['high-performance', 'settings']);
      },
    );
  });

  it('answers the machine facts from the firmware strings', async () => {
    await withEmulated(
      {
        change: (s) => {
          s.firmware = { SystemManufacturer: 'VMware, Inc.', SystemProductName: 'VMware7,1' };
        },
      },
      async (emu) => {
        assert.deepEqual((await emu.backend.facts()).virtualization, { detected: true, kind: 'vmware' });
      },
    );
  });
});

describe('windows backend: cost', () => {
  it('100 concurrent getActive calls cost at most 2 powercfg runs of each kind', async () => {
    const custom = '55555555-2222-4333-8444-555555555555';
    await withEmulated(
      {
        change: (s) => {
          s.plans.push({ guid: custom, name: 'Custom', settings: s.plans[1]!.settings });
          s.active = custom;
        },
      },
      async (emu) => {
        const answers = await Promise.all(Array.from({ length: 100 }, () => emu.backend.getActive()));
        assert.ok(answers.every((a) => a.plan?.id === custom && a.plan.kind === 'high-performance'));
        const byKind = new Map<string, number>();
        for (const e of await emu.argv()) {
          const key = `${e.tool} ${e.argv[0]} ${e.argv.slice(2).join(' ')}`;
          byKind.set(key, (byKind.get(key) ?? 0) + 1);
        }
        assert.ok(byKind.size >= 4, `getactivescheme, processor, personality, policy: ${[...byKind.keys()]}`);
        for (const [kind, count] of byKind) assert.ok(count <= 2, `${kind}: ${count} runs`);

        // A change clears the cache: the next read sees it.
        await emu.backend.setActive(SCHEME.balanced);
        assert.equal((await emu.backend.getActive()).plan?.id, SCHEME.balanced);
      },
    );
  });

  it('a live read (the desired-state check) reads the plan in force and its owner now, and shares it', async () => {
    await withEmulated(
      {},
      async (emu) => {
        assert.equal((await emu.backend.getActive()).plan?.id, SCHEME.balanced);
        await emu.update((s) => {
          s.active = SCHEME.powerSaver;
        });
        assert.equal((await emu.backend.getActive()).plan?.id, SCHEME.balanced, 'a reused read');
        const runs = async () => ({
          active: (await emu.calls('/getactivescheme')).length,
          policy: (await emu.argv()).filter((e) => e.tool === 'reg' && e.argv[0] === 'query').length,
        });
        const before = await runs();
        const live = await emu.backend.getActive({ live: true });
        assert.equal(live.plan?.id, SCHEME.powerSaver);
        const after = await runs();
        assert.equal(after.active, before.active + 1, 'one run of /getactivescheme');
        assert.ok(after.policy > before.policy, 'the policy read again');
        assert.equal(
          (await emu.backend.getActive()).plan?.id,
          SCHEME.powerSaver,
          'the live answer is shared',
        );
        assert.equal((await runs()).active, after.active);
      },
      { cacheTtlMs: 600_000 },
    );
  });
});
