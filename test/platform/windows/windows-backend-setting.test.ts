/**
 * The Windows backend changing the plan against the powercfg and reg emulators: by GUID, alias and
 * localized name; schemes that do not exist; a set that did not take; rights; a hanging or missing
 * powercfg; creating Ultimate Performance from its template.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RunFn } from '../../../src/lib/run-command.ts';
import { resolvePlan } from '../../../src/platform/resolve.ts';
import { CREATED_SCHEME, SCHEME } from '../../../src/platform/windows/well-known.ts';
import { createWindowsBackend } from '../../../src/platform/windows/windows-backend.ts';
import { isCode } from '../../support/errors.ts';
import { POWERCFG_EMULATOR, withEmulated } from './emulator.ts';

describe('windows backend: setting', () => {
  it('sets by GUID, by powercfg alias and by exact localized name, always passing the GUID', async () => {
    await withEmulated({ locale: 'de-DE', codepage: 850 }, async (emu) => {
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
    });
  });

  it('reports a scheme that does not exist as not_found, in a language it cannot read too', async () => {
    await withEmulated({}, async (emu) => {
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
    });
  });

  it('reports a set that did not take as os_error', async () => {
    await withEmulated({}, async (emu) => {
      // powercfg says yes, but something puts Balanced back at once.
      const reverted: RunFn = async (file, args, o) =>
        args[0] === '/setactive'
          ? { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), exitCode: 0 }
          : emu.run(file, args, o);
      const b = createWindowsBackend({ powercfgPath: POWERCFG_EMULATOR, run: reverted, regPath: null });
      await assert.rejects(b.setActive(SCHEME.highPerformance), isCode('os_error', 'still', SCHEME.balanced));
    });
  });

  it('maps the elevation message to forbidden, in English and Chinese, and says so afterwards', async () => {
    for (const [locale, codepage] of [
      ['en-US', 437],
      ['zh-CN', 936],
    ] as const) {
      await withEmulated(
        {
          locale,
          codepage,
          change: (s) => {
            s.notElevated = true;
          },
        },
        async (emu) => {
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
        },
      );
    }
  });

  it('kills a hanging powercfg at the timeout, answers timeout, and keeps working', async () => {
    await withEmulated(
      {
        change: (s) => {
          s.hang = ['/list'];
        },
      },
      async (emu) => {
        await assert.rejects(emu.backend.listPlans(), isCode('timeout', 'powercfg /list'));
        assert.equal((await emu.backend.getActive()).plan?.id, SCHEME.balanced, 'other calls still work');
        await emu.update((s) => {
          s.hang = false;
        });
        assert.equal((await emu.backend.listPlans()).length, 3, 'a timeout is not cached');
      },
      { timeoutMs: 4_000 },
    );
  });

  it('names the path and POWERPLAN_POWERCFG when powercfg is missing', async () => {
    const b = createWindowsBackend({ powercfgPath: '/nonexistent/powercfg.exe', regPath: null });
    await assert.rejects(
      b.listPlans(),
      isCode('os_error', '/nonexistent/powercfg.exe', 'POWERPLAN_POWERCFG'),
    );
  });

  it('creates Ultimate Performance from its template with /duplicatescheme', async () => {
    await withEmulated({}, async (emu) => {
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
    });
  });
});
