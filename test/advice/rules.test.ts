/** The advice rule table: one scenario per situation users meet, with the advice and reasons expected. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdviceInput } from '../../src/advice/input.ts';
import { recommend } from '../../src/advice/recommend.ts';
import { Recommendation } from '../../src/domain/advice.ts';
import { emptyProcessorSettings, type Plan } from '../../src/domain/schemas.ts';
import { operationByName } from '../../src/operations/index.ts';
import { SCHEME } from '../../src/platform/windows/well-known.ts';
import { activeOf, plansWith, win, windowsInput, windowsSettings } from './scenarios.ts';

const stock = [win.balanced, win.high, win.saver];

/** set_power_plan's own bindings: the actions must follow them, whatever they become. */
const setPlan = operationByName('set_power_plan')!;
const cliSet = (...args: string[]) => ['powerplan', ...setPlan.cli.command, ...args].join(' ');

const linuxInput = (
  planDefs: Omit<Plan, 'active'>[],
  activeId: string | null,
  extra: {
    processor?: AdviceInput['active']['processor'];
    active?: Partial<AdviceInput['active']>;
    vm?: string;
  } = {},
): AdviceInput => {
  const plans = activeId === null ? [] : plansWith(planDefs, activeId);
  return {
    workload: 'database',
    system: {
      backend: 'linux',
      virtualization: extra.vm ? { detected: true, kind: extra.vm } : { detected: false, kind: null },
      powerSource: 'ac',
      capabilities: { listPlans: true, setPlan: true, createPlan: false, processorSettings: true },
      templates: [],
    },
    plans,
    active: activeOf(plans, extra.processor ?? emptyProcessorSettings(), { owner: 'sysfs', ...extra.active }),
  };
};

const factNames = (r: Recommendation) => r.reasons.map((x) => x.fact.name);
const reasonWith = (r: Recommendation, name: string) => r.reasons.find((x) => x.fact.name === name);
const caveatKinds = (r: Recommendation) => r.caveats.map((c) => c.kind);
const commands = (r: Recommendation) => r.actions.map((a) => a.command);

/** Every answer must satisfy the published schema. */
const advise = (input: AdviceInput): Recommendation => Recommendation.parse(recommend(input));

describe('advice rules', () => {
  it('Windows Balanced with 5% minimum state: switch to High performance, citing the setting', () => {
    const r = advise(windowsInput(stock, SCHEME.balanced, windowsSettings.balanced()));
    assert.equal(r.changeRecommended, true);
    assert.equal(r.recommended?.id, SCHEME.highPerformance);
    assert.equal(r.recommended?.installed, true);
    const min = reasonWith(r, 'minStatePercent.ac');
    assert.equal(min?.fact.value, 5);
    assert.match(min!.text, /minimum processor state is 5% on AC/);
    assert.equal(r.confidence, 'medium', 'rules only: not measured');
    assert.equal(r.basis.kind, 'rules');
    assert.ok(commands(r).includes(`powercfg /setactive ${SCHEME.highPerformance}`));
    assert.ok(commands(r).includes(cliSet(SCHEME.highPerformance)));
    const restCall = r.actions.find((a) => a.via === 'rest');
    assert.deepEqual(restCall?.request, {
      method: setPlan.http.method,
      path: setPlan.http.path,
      body: { plan: SCHEME.highPerformance },
    });
    assert.equal(
      restCall?.command,
      `${setPlan.http.method} ${setPlan.http.path} {"plan":"${SCHEME.highPerformance}"}`,
    );
    assert.ok(r.actions.some((a) => a.via === 'powershell'));
    assert.ok(caveatKinds(r).includes('power-heat'));
    assert.ok(caveatKinds(r).includes('battery'));
    assert.equal(r.expectedGain, undefined, 'no gain claimed without a measurement');
  });

  it('High performance already active: nothing to change', () => {
    const r = advise(windowsInput(stock, SCHEME.highPerformance, windowsSettings.performance()));
    assert.equal(r.changeRecommended, false);
    assert.match(r.summary, /^Nothing to change/);
    assert.equal(r.recommended?.id, SCHEME.highPerformance);
    assert.equal(r.recommended?.active, true);
    assert.deepEqual(r.actions, []);
    assert.equal(r.confidence, 'high');
    assert.equal(reasonWith(r, 'minStatePercent.ac')?.fact.value, 100);
  });

  it('Ultimate Performance active: never a downgrade to High performance, for any performance workload', () => {
    for (const workload of ['database', 'batch', 'latency'] as const) {
      const r = advise(
        windowsInput([...stock, win.ultimate], win.ultimate.id, windowsSettings.performance(), { workload }),
      );
      assert.equal(r.changeRecommended, false, workload);
      assert.equal(r.recommended?.kind, 'ultimate-performance', workload);
      assert.ok(reasonWith(r, 'plan.kind')?.text.includes('step down'), workload);
    }
  });

  it('a custom plan with 100% minimum state is already fine: settings decide, not names', () => {
    const r = advise(windowsInput([...stock, win.custom], win.custom.id, windowsSettings.performance()));
    assert.equal(r.changeRecommended, false);
    assert.equal(r.recommended?.id, win.custom.id);
    assert.equal(reasonWith(r, 'minStatePercent.ac')?.fact.value, 100);
    assert.match(reasonWith(r, 'plan.kind')!.text, /settings decide, not its name/);
  });

  it('a custom plan that lets the clock fall is treated like Balanced', () => {
    const r = advise(windowsInput([...stock, win.custom], win.custom.id, windowsSettings.balanced()));
    assert.equal(r.changeRecommended, true);
    assert.equal(r.recommended?.id, SCHEME.highPerformance);
  });

  it('group-policy managed: the change is advised with the policy caveat and the policy path', () => {
    const r = advise(
      windowsInput(
        stock,
        SCHEME.balanced,
        windowsSettings.balanced(),
        {},
        { owner: 'group-policy', policyManaged: true },
      ),
    );
    assert.equal(r.changeRecommended, true);
    assert.ok(caveatKinds(r).includes('group-policy'));
    const gp = r.actions.find((a) => a.via === 'group-policy');
    assert.ok(gp?.command.includes(SCHEME.highPerformance));
  });

  it('a caller that cannot set the plan gets the reason as a caveat', () => {
    const reason = 'Changing the power plan requires administrator rights: run the service elevated.';
    const r = advise(
      windowsInput(
        stock,
        SCHEME.balanced,
        windowsSettings.balanced(),
        {},
        { canSet: false, cannotSetReason: reason },
      ),
    );
    assert.ok(r.caveats.some((c) => c.kind === 'rights' && c.text.includes(reason)));
  });

  it('VM with no controls: nothing to change, the host decides', () => {
    const r = advise(
      linuxInput([], null, {
        vm: 'kvm',
        active: {
          owner: 'hypervisor',
          canSet: false,
          cannotSetReason:
            "virtual machine detected (kvm): the hypervisor host's power policy decides the CPU clock",
        },
      }),
    );
    assert.equal(r.recommended, null);
    assert.equal(r.changeRecommended, false);
    assert.match(r.summary, /^Nothing to change/);
    const vm = reasonWith(r, 'virtualization');
    assert.equal(vm?.fact.value, 'kvm');
    assert.match(vm!.text, /virtual machine: the host's policy decides/);
    assert.ok(caveatKinds(r).includes('vm-host'));
    assert.deepEqual(r.actions, []);
  });

  it('a Windows VM with plans: still advised, with the host caveat and lower confidence', () => {
    const input = windowsInput(stock, SCHEME.balanced, windowsSettings.balanced());
    input.system.virtualization = { detected: true, kind: 'microsoft' };
    const r = advise(input);
    assert.equal(r.changeRecommended, true);
    assert.equal(r.confidence, 'low');
    assert.ok(caveatKinds(r).includes('vm-host'));
  });

  it('Linux powersave on intel_cpufreq (passive): the minimum clock is pinned, switch to performance', () => {
    const governors = ['performance', 'schedutil', 'powersave'].map((g, i) => ({
      id: g,
      name: g,
      kind: (['high-performance', 'balanced', 'power-saver'] as const)[i]!,
      builtin: true,
    }));
    const r = advise(
      linuxInput(governors, 'powersave', {
        processor: {
          ...emptyProcessorSettings(),
          governor: 'powersave',
          driver: 'intel_cpufreq',
          driverMode: 'passive',
        },
      }),
    );
    assert.equal(r.changeRecommended, true);
    assert.equal(r.recommended?.id, 'performance');
    assert.equal(r.confidence, 'high');
    const gov = reasonWith(r, 'governor');
    assert.match(gov!.text, /pins the CPU at its minimum frequency/);
    assert.match(String(gov!.fact.value), /intel_cpufreq/);
    assert.ok(
      commands(r).some((c) =>
        c.startsWith('echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor'),
      ),
    );
    assert.ok(!r.actions.some((a) => a.via === 'powercfg'));
  });

  it('Linux powersave on intel_pstate (active) with balance_performance is balanced, not pinned', () => {
    const plans = [
      { id: 'performance', name: 'performance', kind: 'high-performance' as const, builtin: true },
      {
        id: 'powersave:balance_performance',
        name: 'powersave + EPP balance_performance',
        kind: 'balanced' as const,
        builtin: true,
      },
    ];
    const r = advise(
      linuxInput(plans, 'powersave:balance_performance', {
        processor: {
          ...emptyProcessorSettings(),
          governor: 'powersave',
          driver: 'intel_pstate',
          energyPreference: 'balance_performance',
        },
      }),
    );
    assert.equal(r.recommended?.id, 'performance');
    assert.equal(r.confidence, 'medium');
    assert.equal(reasonWith(r, 'energyPreference')?.fact.value, 'balance_performance');
  });

  it('tuned owner: the native command is tuned-adm; latency prefers latency-performance', () => {
    const plans = ['throughput-performance', 'latency-performance', 'balanced'].map((id) => ({
      id,
      name: id,
      kind: id === 'balanced' ? ('balanced' as const) : ('high-performance' as const),
      builtin: true,
    }));
    const input = linuxInput(plans, 'balanced', { active: { owner: 'tuned' } });
    const db = advise(input);
    assert.equal(db.recommended?.id, 'throughput-performance');
    assert.ok(commands(db).includes('tuned-adm profile throughput-performance'));
    const lat = advise({ ...input, workload: 'latency' });
    assert.equal(lat.recommended?.id, 'latency-performance');
  });

  it('PPD placeholder without a performance profile: nothing this service can change, and why', () => {
    const plans = [
      { id: 'balanced', name: 'balanced', kind: 'balanced' as const, builtin: true },
      { id: 'power-saver', name: 'power-saver', kind: 'power-saver' as const, builtin: true },
    ];
    const note = {
      code: 'no-performance-profile' as const,
      text: 'power-profiles-daemon offers no performance profile here (placeholder driver: no CPU or platform driver it can steer).',
    };
    const r = advise(
      linuxInput(plans, 'balanced', { active: { owner: 'power-profiles-daemon', notes: [note] } }),
    );
    assert.equal(r.changeRecommended, false);
    assert.equal(r.recommended?.id, 'balanced', 'never a plan that does not exist');
    assert.match(r.summary, /^Nothing this service can change/);
    const missing = reasonWith(r, 'performancePlanAvailable');
    assert.equal(missing?.fact.value, false);
    assert.match(missing!.text, /placeholder driver/);
    assert.ok(caveatKinds(r).includes('firmware'));
    assert.deepEqual(r.actions, []);
  });

  it("the advice reads a note's code, not its wording", () => {
    const plans = [
      { id: 'balanced', name: 'balanced', kind: 'balanced' as const, builtin: true },
      { id: 'power-saver', name: 'power-saver', kind: 'power-saver' as const, builtin: true },
    ];
    const withNote = (code: 'no-performance-profile' | 'profile-degraded', text: string) =>
      advise(
        linuxInput(plans, 'balanced', {
          active: { owner: 'power-profiles-daemon', notes: [{ code, text }] },
        }),
      );
    const reworded = withNote('no-performance-profile', 'Kein Leistungsprofil verfügbar.');
    assert.equal(reasonWith(reworded, 'performancePlanAvailable')?.text, 'Kein Leistungsprofil verfügbar.');
    const other = withNote('profile-degraded', 'The performance profile is degraded (hot).');
    assert.match(
      reasonWith(other, 'performancePlanAvailable')!.text,
      /^no performance plan exists here and this system cannot create one/,
      'a note about something else is not taken for the reason',
    );
  });

  it('a plan to create comes from the templates the backend announces, by kind', () => {
    const none = windowsInput([win.balanced], SCHEME.balanced, windowsSettings.balanced());
    none.system.templates = [];
    const r = advise(none);
    assert.equal(r.changeRecommended, false, 'nothing to create, so nothing is offered');
    assert.match(r.summary, /^Nothing this service can change/);
    const onlyHigh = windowsInput([win.balanced], SCHEME.balanced, windowsSettings.balanced(), {
      workload: 'latency',
    });
    onlyHigh.system.templates = [
      { id: SCHEME.highPerformance, name: 'High performance', kind: 'high-performance' },
    ];
    const latency = advise(onlyHigh);
    assert.equal(latency.recommended?.installed, false);
    assert.equal(latency.recommended?.kind, 'high-performance', 'the next kind the workload accepts');
    assert.equal(latency.recommended?.id, SCHEME.highPerformance);
    assert.ok(commands(latency).includes(cliSet('high-performance', '--create')));
  });

  it('energy-saving workload: from High performance to Balanced; Balanced stays', () => {
    const fromHigh = advise(
      windowsInput(stock, SCHEME.highPerformance, windowsSettings.performance(), {
        workload: 'energy-saving',
      }),
    );
    assert.equal(fromHigh.changeRecommended, true);
    assert.equal(fromHigh.recommended?.id, SCHEME.balanced);
    assert.equal(fromHigh.workload, 'energy-saving');
    assert.equal(reasonWith(fromHigh, 'minStatePercent.ac')?.fact.value, 100);
    assert.ok(caveatKinds(fromHigh).includes('power-heat'));
    assert.ok(commands(fromHigh).includes(`powercfg /setactive ${SCHEME.balanced}`));

    const stay = advise(
      windowsInput(stock, SCHEME.balanced, windowsSettings.balanced(), { workload: 'energy-saving' }),
    );
    assert.equal(stay.changeRecommended, false);
    assert.match(stay.summary, /^Nothing to change/);
  });

  it('no High performance plan installed (Modern Standby): say how to create it', () => {
    const r = advise(windowsInput([win.balanced], SCHEME.balanced, windowsSettings.balanced()));
    assert.equal(r.changeRecommended, true);
    assert.equal(r.recommended?.installed, false);
    assert.equal(r.recommended?.kind, 'high-performance');
    assert.ok(commands(r).includes(`powercfg /duplicatescheme ${SCHEME.highPerformance}`));
    const rest = r.actions.find((a) => a.via === 'rest');
    assert.deepEqual(rest?.request?.body, { plan: 'high-performance', create: true });
    assert.ok(commands(r).includes(cliSet('high-performance', '--create')));
    assert.equal(rest?.request?.path, setPlan.http.path);
  });

  it('latency workload without Ultimate installed: create it from the template', () => {
    const r = advise(
      windowsInput([win.balanced], SCHEME.balanced, windowsSettings.balanced(), { workload: 'latency' }),
    );
    assert.equal(r.recommended?.kind, 'ultimate-performance');
    assert.equal(r.recommended?.id, SCHEME.ultimateTemplate);
    assert.ok(commands(r).includes(`powercfg /duplicatescheme ${SCHEME.ultimateTemplate}`));
    assert.ok(
      r.actions.some(
        (a) => a.via === 'powershell' && a.command.includes(`/duplicatescheme ${SCHEME.ultimateTemplate} $g`),
      ),
    );
  });

  it("the REST and CLI actions are set_power_plan's: its method and path, valid input, its command words", () => {
    const cases = [
      advise(windowsInput(stock, SCHEME.balanced, windowsSettings.balanced())),
      advise(
        windowsInput([win.balanced], SCHEME.balanced, windowsSettings.balanced(), { workload: 'latency' }),
      ),
      advise(
        linuxInput(
          [
            { id: 'performance', name: 'performance', kind: 'high-performance', builtin: true },
            { id: 'powersave', name: 'powersave', kind: 'power-saver', builtin: true },
          ],
          'powersave',
          { active: { owner: 'tuned' } },
        ),
      ),
    ];
    for (const r of cases) {
      const rest = r.actions.find((a) => a.via === 'rest');
      assert.equal(rest?.request?.method, setPlan.http.method);
      assert.equal(rest?.request?.path, setPlan.http.path);
      const input = setPlan.input.parse(rest?.request?.body);
      const cli = r.actions.find((a) => a.via === 'cli')?.command.split(' ') ?? [];
      const words = setPlan.cli.command.length;
      assert.deepEqual(cli.slice(0, 1 + words), ['powerplan', ...setPlan.cli.command]);
      assert.equal(cli[1 + words], input[setPlan.cli.positional![0]!], 'the same plan as the REST body');
      assert.equal(cli.includes('--create'), input.create === true);
    }
  });

  it('a maximum state below 100% or boost off is power-saving, whatever the plan is called', () => {
    const settings = {
      ...windowsSettings.performance(),
      maxStatePercent: { ac: 80, dc: 80 },
      boostMode: { ac: 0, dc: 0 },
    };
    const r = advise(windowsInput([...stock, win.custom], win.custom.id, settings));
    assert.equal(r.changeRecommended, true);
    assert.equal(reasonWith(r, 'maxStatePercent.ac')?.fact.value, 80);
    assert.ok(factNames(r).includes('boostMode.ac'));
    assert.equal(r.confidence, 'high');
  });
});
