/**
 * The Windows backend against the powercfg and reg emulators: the shared contract in two locales,
 * localized names, classification, /qh fallback, group policy, rights, a hanging powercfg, the
 * single-flight figure, inert arguments, and set_power_plan through the operations layer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { PowerPlanError } from '../../../src/domain/errors.ts';
import { ActivePlan, SetPlanResult } from '../../../src/domain/schemas.ts';
import { localCaller } from '../../../src/domain/scopes.ts';
import type { RunFn } from '../../../src/lib/run-command.ts';
import type { OperationContext } from '../../../src/operations/define.ts';
import { setPowerPlan } from '../../../src/operations/set-power-plan.ts';
import { createBackend } from '../../../src/platform/detect.ts';
import { resolvePlan } from '../../../src/platform/resolve.ts';
import { EVENTS_QUERY } from '../../../src/platform/windows/events.ts';
import { CREATED_SCHEME, SCHEME, SETTING } from '../../../src/platform/windows/well-known.ts';
import { createWindowsBackend } from '../../../src/platform/windows/windows-backend.ts';
import { S } from '../../emulators/win-emu-state.mjs';
import { testDeps } from '../../support/deps.ts';
import { isCode } from '../../support/errors.ts';
import { backendContract } from '../backend-contract.ts';
import { emulate, POWERCFG_EMULATOR } from './emulator.ts';

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
      const emu = await emulate({ locale, codepage });
      try {
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
      } finally {
        await emu.cleanup();
      }
    }
  });

  it('prefers POWERPLAN_CODEPAGE over the registry', async () => {
    const emu = await emulate(
      {
        locale: 'de-DE',
        codepage: 850,
        change: (s) => {
          s.oemcp = 1251;
        },
      },
      { codepage: 850 },
    );
    try {
      assert.ok((await emu.backend.listPlans()).some((p) => p.name === 'Höchstleistung'));
      assert.equal((await emu.argv()).filter((e) => e.tool === 'reg').length, 0);
    } finally {
      await emu.cleanup();
    }
  });

  it('takes valid UTF-8 output as it is, without a code page lookup', async () => {
    const emu = await emulate({ locale: 'zh-CN', codepage: 65001 });
    try {
      assert.ok((await emu.backend.listPlans()).some((p) => p.name === '高性能'));
      assert.equal((await emu.argv()).filter((e) => e.tool === 'reg').length, 0);
    } finally {
      await emu.cleanup();
    }
  });

  it('reports the processor settings of the active plan, hidden ones included through /qh', async () => {
    const emu = await emulate({
      change: (s) => {
        s.active = SCHEME.highPerformance;
      },
    });
    try {
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
    } finally {
      await emu.cleanup();
    }
  });

  it('falls back to /query where /qh does not exist, and remembers it', async () => {
    const emu = await emulate({
      change: (s) => {
        s.noQh = true;
      },
    });
    try {
      const first = await emu.backend.getActive();
      assert.deepEqual(first.processor.minStatePercent, { ac: 5, dc: 5 });
      assert.equal(first.processor.boostMode, null, 'hidden without /qh');
      await emu.backend.setActive(SCHEME.powerSaver);
      assert.deepEqual((await emu.backend.getActive()).processor.maxStatePercent, { ac: 100, dc: 70 });
      assert.equal((await emu.calls('/qh')).length, 1, '/qh is tried once');
      assert.equal((await emu.calls('/query')).length, 2);
    } finally {
      await emu.cleanup();
    }
  });

  it('classifies custom and duplicated plans by personality, then by processor settings', async () => {
    const hpCopy = '11111111-2222-4333-8444-555555555555';
    const tuned = '22222222-2222-4333-8444-555555555555';
    const odd = '33333333-2222-4333-8444-555555555555';
    const emu = await emulate({
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
    });
    try {
      const plans = await emu.backend.listPlans();
      const kind = (id: string) => {
        const p = plans.find((x) => x.id === id)!;
        return [p.kind, p.kindSource, p.builtin];
      };
      assert.deepEqual(kind(SCHEME.balanced), ['balanced', 'well-known-id', true]);
      assert.deepEqual(kind(hpCopy), ['high-performance', 'personality', false]);
      assert.deepEqual(kind(tuned), ['balanced', 'personality', false], 'the personality wins over settings');
      assert.deepEqual(kind(odd), ['custom', 'default', false]);
      assert.equal(plans.find((p) => p.id === hpCopy)?.name, 'Copy of High performance (SQL)');
      // The custom plans cost a query to classify; the built-in ones are known by GUID and queried
      // only for their processor settings, to tell an edited built-in plan.
      assert.deepEqual(
        new Set((await emu.calls('/qh')).map((a) => a[1])),
        new Set([hpCopy, tuned, odd, SCHEME.balanced, SCHEME.highPerformance, SCHEME.powerSaver]),
      );
      assert.ok(plans.filter((p) => p.builtin).every((p) => p.edited === false && !p.differences));
    } finally {
      await emu.cleanup();
    }
  });

  it('without /qh, a plan with a 100% minimum processor state is high-performance by its settings', async () => {
    const custom = '44444444-2222-4333-8444-555555555555';
    const emu = await emulate({
      change: (s) => {
        s.noQh = true;
        const hp = s.plans.find((p) => p.guid === SCHEME.highPerformance)!;
        s.plans.push({ guid: custom, name: 'SQL', settings: hp.settings });
      },
    });
    try {
      const p = (await emu.backend.listPlans()).find((x) => x.id === custom);
      assert.deepEqual([p?.kind, p?.kindSource], ['high-performance', 'settings']);
    } finally {
      await emu.cleanup();
    }
  });

  it('answers the machine facts from the firmware strings', async () => {
    const emu = await emulate({
      change: (s) => {
        s.firmware = { SystemManufacturer: 'VMware, Inc.', SystemProductName: 'VMware7,1' };
      },
    });
    try {
      assert.deepEqual((await emu.backend.facts()).virtualization, { detected: true, kind: 'vmware' });
    } finally {
      await emu.cleanup();
    }
  });
});

describe('windows backend: setting', () => {
  it('sets by GUID, by powercfg alias and by exact localized name, always passing the GUID', async () => {
    const emu = await emulate({ locale: 'de-DE', codepage: 850 });
    try {
      const b = emu.backend;
      const resolveAndSet = async (input: string) => {
        const plan = resolvePlan(input, await b.listPlans(), b.aliases?.());
        await b.setActive(plan.id);
        return (await emu.state()).active;
      };
      assert.equal(await resolveAndSet('{A1841308-3541-4FAB-BC81-F71556F20B4A}'), SCHEME.powerSaver);
      assert.equal(await resolveAndSet('SCHEME_MIN'), SCHEME.highPerformance);
      assert.equal(await resolveAndSet('ausbalanciert'), SCHEME.balanced);
      assert.equal(await resolveAndSet('Höchstleistung'), SCHEME.highPerformance);
      assert.deepEqual(await emu.calls('/setactive'), [
        ['/setactive', SCHEME.powerSaver],
        ['/setactive', SCHEME.highPerformance],
        ['/setactive', SCHEME.balanced],
        ['/setactive', SCHEME.highPerformance],
      ]);
    } finally {
      await emu.cleanup();
    }
  });

  it('reports a scheme that does not exist as not_found, in a language it cannot read too', async () => {
    const emu = await emulate();
    try {
      const missing = '00000000-1111-4222-8333-444444444444';
      await assert.rejects(emu.backend.setActive(missing), isCode('not_found'));
      // An error text in no known language: the scheme list decides.
      const unknownLanguage: RunFn = async (file, args, o) =>
        args[0] === '/setactive'
          ? { stdout: Buffer.alloc(0), stderr: Buffer.from('Odottamaton virhe.\r\n'), exitCode: 1 }
          : emu.run(file, args, o);
      const b = createWindowsBackend({
        powercfgPath: POWERCFG_EMULATOR,
        run: unknownLanguage,
        regPath: null,
      });
      await assert.rejects(b.setActive(missing), isCode('not_found', missing));
      await assert.rejects(b.setActive(SCHEME.powerSaver), isCode('os_error', 'Odottamaton virhe.'));
    } finally {
      await emu.cleanup();
    }
  });

  it('reports a set that did not take as os_error', async () => {
    const emu = await emulate();
    try {
      // powercfg says yes, but something puts Balanced back at once.
      const reverted: RunFn = async (file, args, o) =>
        args[0] === '/setactive'
          ? { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 }
          : emu.run(file, args, o);
      const b = createWindowsBackend({ powercfgPath: POWERCFG_EMULATOR, run: reverted, regPath: null });
      await assert.rejects(b.setActive(SCHEME.highPerformance), isCode('os_error', 'still', SCHEME.balanced));
    } finally {
      await emu.cleanup();
    }
  });

  it('maps the elevation message to forbidden, in English and Chinese, and says so afterwards', async () => {
    for (const [locale, codepage] of [
      ['en-US', 437],
      ['zh-CN', 936],
    ] as const) {
      const emu = await emulate({
        locale,
        codepage,
        change: (s) => {
          s.notElevated = true;
        },
      });
      try {
        await assert.rejects(
          emu.backend.setActive(SCHEME.highPerformance),
          isCode('forbidden', 'elevated', 'LocalSystem'),
        );
        const active = await emu.backend.getActive();
        assert.equal(active.plan?.id, SCHEME.balanced);
        assert.equal(active.canSet, false);
        assert.match(active.cannotSetReason ?? '', /LocalSystem/);
        await assert.rejects(emu.backend.createPlan!('ultimate-performance'), isCode('forbidden'));
        await emu.update((s) => {
          s.notElevated = false;
        });
        await emu.backend.setActive(SCHEME.highPerformance);
        assert.equal((await emu.backend.getActive()).canSet, true, 'a successful change clears it');
      } finally {
        await emu.cleanup();
      }
    }
  });

  it('kills a hanging powercfg at the timeout, answers timeout, and keeps working', async () => {
    const emu = await emulate(
      {
        change: (s) => {
          s.hang = ['/list'];
        },
      },
      { timeoutMs: 4_000 },
    );
    try {
      await assert.rejects(emu.backend.listPlans(), isCode('timeout', 'powercfg /list'));
      assert.equal((await emu.backend.getActive()).plan?.id, SCHEME.balanced, 'other calls still work');
      await emu.update((s) => {
        s.hang = false;
      });
      assert.equal((await emu.backend.listPlans()).length, 3, 'a timeout is not cached');
    } finally {
      await emu.cleanup();
    }
  });

  it('names the path and POWERPLAN_POWERCFG when powercfg is missing', async () => {
    const b = createWindowsBackend({ powercfgPath: '/nonexistent/powercfg.exe', regPath: null });
    await assert.rejects(
      b.listPlans(),
      isCode('os_error', '/nonexistent/powercfg.exe', 'POWERPLAN_POWERCFG'),
    );
  });

  it('creates Ultimate Performance from its template with /duplicatescheme', async () => {
    const emu = await emulate();
    try {
      const created = await emu.backend.createPlan!('ultimate-performance');
      assert.notEqual(created.id, SCHEME.ultimateTemplate);
      assert.deepEqual(
        [created.kind, created.active, created.builtin],
        ['ultimate-performance', false, false],
      );
      assert.equal(created.name, 'Ultimate Performance');
      assert.equal(created.id, CREATED_SCHEME['ultimate-performance']);
      assert.deepEqual(await emu.calls('/duplicatescheme'), [
        ['/duplicatescheme', SCHEME.ultimateTemplate, CREATED_SCHEME['ultimate-performance']],
      ]);
      const template = emu.backend.templates!().find((t) => t.kind === 'ultimate-performance');
      assert.equal(template?.id, SCHEME.ultimateTemplate, 'the template it announces is the one it copies');
      const listed = (await emu.backend.listPlans()).find((p) => p.id === created.id);
      assert.equal(listed?.kind, 'ultimate-performance', 'the new plan is listed at once, as what it is');
      // A new backend instance (a restart) still knows the copy by the GUID it was given, although its
      // settings alone equal High performance's.
      const restarted = createWindowsBackend({
        powercfgPath: POWERCFG_EMULATOR,
        regPath: null,
        chcpPath: null,
        run: emu.run,
      });
      const again = (await restarted.listPlans()).find((p) => p.id === created.id);
      assert.equal(again?.kind, 'ultimate-performance');
    } finally {
      await emu.cleanup();
    }
  });
});

describe('windows backend: cost', () => {
  it('100 concurrent getActive calls cost at most 2 powercfg runs of each kind', async () => {
    const custom = '55555555-2222-4333-8444-555555555555';
    const emu = await emulate({
      change: (s) => {
        s.plans.push({ guid: custom, name: 'Custom', settings: s.plans[1]!.settings });
        s.active = custom;
      },
    });
    try {
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
    } finally {
      await emu.cleanup();
    }
  });
});

/** set_power_plan's handler, its output checked against the public schema. */
const setPlan = async (input: { plan: string; dryRun: boolean; create: boolean }, ctx: OperationContext) =>
  SetPlanResult.parse(await setPowerPlan.handler(input, ctx));

describe('windows backend: no argument reaches a shell', () => {
  const nasty = [
    'x & calc.exe',
    'a | whoami',
    'b; rm -rf /',
    '"quoted" \'single\'',
    'line\nbreak',
    `${SCHEME.balanced} & calc`,
    '$(touch /tmp/pwned)',
  ];

  it('plan strings with shell metacharacters are refused before powercfg, and a name with them is passed as its GUID', async () => {
    const weird = '66666666-2222-4333-8444-555555555555';
    const weirdName = 'a & b | c; "d" \'e\' `f` $(g)';
    const emu = await emulate({
      change: (s) => {
        s.plans.push({ guid: weird, name: weirdName, settings: s.plans[0]!.settings });
      },
    });
    const { deps, cleanup } = await testDeps({}, { backend: emu.backend });
    try {
      const ctx: OperationContext = {
        ...deps,
        signal: new AbortController().signal,
        caller: localCaller,
        progress: () => {},
      };
      for (const plan of nasty) {
        await assert.rejects(emu.backend.setActive(plan), isCode('not_found'));
        await assert.rejects(
          setPlan({ plan, dryRun: false, create: false }, ctx),
          (e: unknown) => e instanceof PowerPlanError,
        );
      }
      const result = await setPlan({ plan: weirdName, dryRun: false, create: false }, ctx);
      assert.equal(result.after.id, weird);
      assert.equal((await emu.state()).active, weird);

      const argv = await emu.argv();
      assert.ok(argv.length > 0);
      const elements = argv.flatMap((e) => e.argv);
      const safe =
        /^(?:\/[a-z]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|query|HKLM(?:\\[A-Za-z]+)+|\/v|[A-Za-z]+)$/;
      // wevtutil's fixed query and switches, and the policy key of a single setting, are constants too.
      const fixed = new Set([`/q:${EVENTS_QUERY}`, '/c:256', '/rd:true', '/f:xml', 'SCHEME_CURRENT']);
      const policyKey =
        /^HKLM(?:\\[A-Za-z]+)+\\[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
      for (const el of elements)
        if (!fixed.has(el) && !policyKey.test(el))
          assert.match(el, safe, 'every argv element is a switch, a GUID or a fixed registry word');
      assert.deepEqual(await emu.calls('/setactive'), [['/setactive', weird]]);
    } finally {
      await cleanup();
      await emu.cleanup();
    }
  });
});

describe('windows backend through set_power_plan', () => {
  const context = async (emu: Awaited<ReturnType<typeof emulate>>) => {
    const t = await testDeps({}, { backend: emu.backend });
    const ctx: OperationContext = {
      ...t.deps,
      signal: new AbortController().signal,
      caller: localCaller,
      progress: () => {},
    };
    return { ctx, cleanup: t.cleanup };
  };

  it('switches by localized name, idempotently, and audits', async () => {
    const emu = await emulate({ locale: 'de-DE', codepage: 850 });
    const { ctx, cleanup } = await context(emu);
    try {
      const dry = await setPlan({ plan: 'Höchstleistung', dryRun: true, create: false }, ctx);
      assert.deepEqual([dry.changed, dry.dryRun, dry.after.id], [true, true, SCHEME.highPerformance]);
      assert.equal((await emu.calls('/setactive')).length, 0, 'a dry run changes nothing');

      const r = await setPlan({ plan: 'Höchstleistung', dryRun: false, create: false }, ctx);
      assert.deepEqual([r.changed, r.before.id, r.after.id], [true, SCHEME.balanced, SCHEME.highPerformance]);
      assert.equal(r.after.name, 'Höchstleistung');
      const again = await setPlan({ plan: 'high-performance', dryRun: false, create: false }, ctx);
      assert.equal(again.changed, false);
      assert.equal((await emu.calls('/setactive')).length, 1, 'the second call touched nothing');
      const audit = await ctx.store.readLines('audit.jsonl');
      assert.equal(audit.length, 1);
    } finally {
      await cleanup();
      await emu.cleanup();
    }
  });

  it('creates a missing Ultimate Performance only when asked (create: true)', async () => {
    const emu = await emulate();
    const { ctx, cleanup } = await context(emu);
    try {
      await assert.rejects(
        setPlan({ plan: 'ultimate-performance', dryRun: false, create: false }, ctx),
        isCode('not_found', 'create: true'),
      );
      const dry = await setPlan({ plan: 'ultimate-performance', dryRun: true, create: true }, ctx);
      assert.equal(dry.created, true);
      assert.equal((await emu.calls('/duplicatescheme')).length, 0, 'a dry run creates nothing');

      const r = await setPlan({ plan: 'ultimate-performance', dryRun: false, create: true }, ctx);
      assert.deepEqual([r.changed, r.created, r.after.kind], [true, true, 'ultimate-performance']);
      const state = await emu.state();
      assert.equal(state.active, r.after.id);
      assert.ok(state.plans.some((p) => p.guid === r.after.id));
      const processor = (await ctx.backend.getActive()).processor;
      assert.deepEqual(processor.minStatePercent, { ac: 100, dc: 100 });

      const again = await setPlan({ plan: 'ultimate-performance', dryRun: false, create: true }, ctx);
      assert.deepEqual([again.changed, again.after.id], [false, r.after.id]);
      assert.equal((await emu.calls('/duplicatescheme')).length, 1, 'created once');
    } finally {
      await cleanup();
      await emu.cleanup();
    }
  });

  it('says that group policy owns the plan and will revert a change', async () => {
    const emu = await emulate({
      change: (s) => {
        s.policy = SCHEME.balanced;
      },
    });
    const { ctx, cleanup } = await context(emu);
    try {
      const active = await ctx.backend.getActive();
      assert.deepEqual([active.owner, active.policyManaged], ['group-policy', true]);
      assert.match(active.warnings?.join(' ') ?? '', /group policy/i);
      assert.deepEqual(
        active.notes?.map((n) => n.code),
        ['policy-managed'],
      );
      const r = await setPlan({ plan: 'SCHEME_MIN', dryRun: false, create: false }, ctx);
      assert.equal(r.after.id, SCHEME.highPerformance);
      assert.match(r.warnings?.join(' ') ?? '', /revert/);
    } finally {
      await cleanup();
      await emu.cleanup();
    }
  });

  it('answers forbidden through the operation when not elevated', async () => {
    const emu = await emulate({
      change: (s) => {
        s.notElevated = true;
      },
    });
    const { ctx, cleanup } = await context(emu);
    try {
      await assert.rejects(
        setPlan({ plan: 'high-performance', dryRun: false, create: false }, ctx),
        isCode('forbidden', 'elevated'),
      );
      const audit = (await ctx.store.readLines('audit.jsonl')) as { result: string }[];
      assert.deepEqual(
        audit.map((a) => a.result),
        ['failed'],
      );
    } finally {
      await cleanup();
      await emu.cleanup();
    }
  });
});

describe('backend choice', () => {
  it('POWERPLAN_BACKEND=windows gives the Windows backend on any OS, without running anything', async () => {
    const { deps, cleanup } = await testDeps();
    try {
      const config = loadConfig({
        POWERPLAN_BACKEND: 'windows',
        POWERPLAN_STATE_DIR: deps.config.stateDir,
        POWERPLAN_POWERCFG: '/nonexistent/powercfg.exe',
      });
      const backend = createBackend(config, deps.store);
      assert.equal(backend.name, 'windows');
      assert.equal(config.powercfg, '/nonexistent/powercfg.exe');
      assert.deepEqual(await backend.capabilities(), {
        listPlans: true,
        setPlan: true,
        createPlan: true,
        processorSettings: true,
      });
      assert.equal(SETTING.personality, S.personality, 'the emulator and the backend agree on the GUIDs');
    } finally {
      await cleanup();
    }
  });
});
