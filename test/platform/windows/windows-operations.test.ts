/**
 * set_power_plan on the Windows backend (powercfg and reg emulators): no plan string reaches a
 * command line but as a resolved GUID, localized names, creating a plan only when asked, group
 * policy, and a refusal for lack of rights, through the operations layer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PowerPlanError } from '../../../src/domain/errors.ts';
import { SetPlanResult } from '../../../src/domain/schemas.ts';
import { localCaller } from '../../../src/domain/scopes.ts';
import type { OperationContext } from '../../../src/operations/define.ts';
import { setPowerPlan } from '../../../src/operations/set-power-plan.ts';
import { EVENTS_QUERY } from '../../../src/platform/windows/events.ts';
import { SCHEME } from '../../../src/platform/windows/well-known.ts';
import { testDeps } from '../../support/deps.ts';
import { isCode } from '../../support/errors.ts';
import { type Emulated, emulate, withEmulated } from './emulator.ts';

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
  /** Runs `test` with set_power_plan's context over a fresh emulated backend, and cleans both up. */
  const withOperation = (
    init: Parameters<typeof withEmulated>[0],
    test: (emu: Emulated, ctx: OperationContext) => Promise<void>,
  ) =>
    withEmulated(init, async (emu) => {
      const t = await testDeps({}, { backend: emu.backend });
      try {
        await test(emu, {
          ...t.deps,
          signal: new AbortController().signal,
          caller: localCaller,
          progress: () => {},
        });
      } finally {
        await t.cleanup();
      }
    });

  it('switches by localized name, idempotently, and audits', async () => {
    await withOperation({ locale: 'de-DE', codepage: 850 }, async (emu, ctx) => {
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
    });
  });

  it('creates a missing Ultimate Performance only when asked (create: true)', async () => {
    await withOperation({}, async (emu, ctx) => {
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
    });
  });

  it('says that group policy owns the plan and will revert a change', async () => {
    await withOperation(
      {
        change: (s) => {
          s.policy = SCHEME.balanced;
        },
      },
      async (_emu, ctx) => {
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
      },
    );
  });

  it('answers forbidden through the operation when not elevated', async () => {
    await withOperation(
      {
        change: (s) => {
          s.notElevated = true;
        },
      },
      async (_emu, ctx) => {
        await assert.rejects(
          setPlan({ plan: 'high-performance', dryRun: false, create: false }, ctx),
          isCode('forbidden', 'elevated'),
        );
        const audit = (await ctx.store.readLines('audit.jsonl')) as { result: string }[];
        assert.deepEqual(
          audit.map((a) => a.result),
          ['failed'],
        );
      },
    );
  });
});
