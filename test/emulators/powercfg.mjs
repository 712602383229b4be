#!/usr/bin/env node
// A powercfg.exe emulator for tests, usable as POWERPLAN_POWERCFG. Driven by the JSON state file
// described in win-emu-state.mjs; answers /list, /getactivescheme, /query and /qh, /setactive,
// /duplicatescheme and /aliases in the layout of the captured outputs in test/fixtures/powercfg-*
// (labels per locale, two spaces before the name, `*` for the active scheme, 2/4/6-space nesting,
// `0x%08x` values), CRLF in the state's code page, errors on stderr with exit code 1.
// Every argv it receives is logged (POWERPLAN_EMU_LOG), so tests can see exactly what reached it.
import { randomUUID } from 'node:crypto';
import { answer, hangForever, loadState, logArgv, S, SCHEME, saveState, sleep } from './win-emu-state.mjs';

/**
 * Labels and messages. en-US and zh-CN come from captures (list, query, admin message); the de-DE
 * and ko-KR list labels too. Where no capture exists the en-US text is used, so nothing here is
 * an invented translation.
 */
const en = {
  header: 'Existing Power Schemes (* Active)',
  scheme: 'Power Scheme GUID',
  alias: 'GUID Alias',
  subgroup: 'Subgroup GUID',
  setting: 'Power Setting GUID',
  min: 'Minimum Possible Setting',
  max: 'Maximum Possible Setting',
  inc: 'Possible Settings increment',
  units: 'Possible Settings units',
  index: 'Possible Setting Index',
  friendly: 'Possible Setting Friendly Name',
  ac: 'Current AC Power Setting Index',
  dc: 'Current DC Power Setting Index',
  notExist: 'The power scheme, subgroup or setting specified does not exist.',
  invalid: 'Invalid Parameters -- try "/?" for help',
  admin:
    'This command requires administrator privileges and must be executed from an elevated command prompt.',
};
const labels = {
  'en-US': en,
  'de-DE': { ...en, header: 'Bestehende Energieschemen (* Aktiv)', scheme: 'GUID des Energieschemas' },
  'ko-KR': { ...en, header: '기존 전원 구성표(* Active)', scheme: '전원 구성표 GUID' },
  'zh-CN': {
    ...en,
    header: '现有电源使用方案 (* Active)',
    scheme: '电源方案 GUID',
    alias: 'GUID 别名',
    subgroup: '子组 GUID',
    setting: '电源设置 GUID',
    min: '最小可能的设置',
    max: '最大可能的设置',
    inc: '可能的设置增量',
    units: '可能的设置单位',
    index: '可能的设置索引',
    friendly: '可能的设置友好名称',
    ac: '当前交流电源设置索引',
    dc: '当前直流电源设置索引',
    admin: '此命令需要管理员权限，并且必须从提升的命令提示符中执行。',
  },
};

const SUB = {
  processor: {
    guid: '54533251-82be-4824-96c1-47b60b740d00',
    alias: 'SUB_PROCESSOR',
    name: 'Processor power management',
  },
  none: {
    guid: 'fea3413e-7e05-4911-9a71-700331f1c294',
    alias: 'SUB_NONE',
    name: 'Settings belonging to no subgroup',
  },
};

const percent = { range: [0, 100, 1, '%'] };
/** Setting metadata; `hidden` ones only show with /qh. */
const SETTINGS = [
  {
    guid: S.idleDisable,
    sub: SUB.processor,
    alias: 'IDLEDISABLE',
    name: 'Processor idle disable',
    options: ['Enable idle', 'Disable idle'],
  },
  {
    guid: S.minState,
    sub: SUB.processor,
    alias: 'PROCTHROTTLEMIN',
    name: 'Minimum processor state',
    ...percent,
  },
  {
    guid: S.coolingPolicy,
    sub: SUB.processor,
    alias: 'SYSCOOLPOL',
    name: 'System cooling policy',
    options: ['Passive', 'Active'],
  },
  {
    guid: S.maxState,
    sub: SUB.processor,
    alias: 'PROCTHROTTLEMAX',
    name: 'Maximum processor state',
    ...percent,
  },
  {
    guid: S.boostMode,
    sub: SUB.processor,
    alias: 'PERFBOOSTMODE',
    name: 'Processor performance boost mode',
    hidden: true,
    options: ['Disabled', 'Enabled', 'Aggressive'],
  },
  {
    guid: S.epp,
    sub: SUB.processor,
    alias: 'PERFEPP',
    name: 'Processor energy performance preference policy',
    hidden: true,
    ...percent,
  },
  {
    guid: S.coreParkingMinCores,
    sub: SUB.processor,
    alias: 'CPMINCORES',
    name: 'Processor performance core parking min cores',
    hidden: true,
    ...percent,
  },
  {
    guid: S.perfIncreaseThreshold,
    sub: SUB.processor,
    alias: 'PERFINCTHRESHOLD',
    name: 'Processor performance increase threshold',
    hidden: true,
    ...percent,
  },
  {
    guid: S.perfIncreaseTime,
    sub: SUB.processor,
    alias: 'PERFINCTIME',
    name: 'Processor performance increase time',
    hidden: true,
    range: [1, 100, 1, 'Time check intervals'],
  },
  {
    guid: S.idleStateMax,
    sub: SUB.processor,
    alias: 'IDLESTATEMAX',
    name: 'Processor idle state maximum',
    hidden: true,
    range: [0, 100, 1, 'State'],
  },
  {
    guid: S.idlePromote,
    sub: SUB.processor,
    alias: 'IDLEPROMOTE',
    name: 'Processor idle promote threshold',
    hidden: true,
    ...percent,
  },
  {
    guid: S.idleDemote,
    sub: SUB.processor,
    alias: 'IDLEDEMOTE',
    name: 'Processor idle demote threshold',
    hidden: true,
    ...percent,
  },
  {
    guid: S.personality,
    sub: SUB.none,
    alias: 'PERSONALITY',
    name: 'Power Scheme Personality',
    hidden: true,
    options: ['Power Saver', 'Maximum Performance', 'Balanced'],
  },
];

const schemeAliases = {
  SCHEME_BALANCED: SCHEME.balanced,
  SCHEME_MIN: SCHEME.highPerformance,
  SCHEME_MAX: SCHEME.powerSaver,
};

const hex = (n) => `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
const lower = (s) => (s ?? '').toLowerCase();

const main = async () => {
  logArgv('powercfg');
  const state = loadState();
  const t = labels[state.locale] ?? en;
  const [rawCommand, ...args] = process.argv.slice(2);
  const command = lower(rawCommand).replace(/^[-/]/, '');

  if (state.hang === true || (Array.isArray(state.hang) && state.hang.includes(`/${command}`))) {
    hangForever();
    return;
  }
  if (state.delayMs) await sleep(state.delayMs);

  const fail = (line) => answer(state, { stderr: [line], code: 1 });
  const schemeLine = (p) => `${t.scheme}: ${p.guid}  (${p.name})`;
  const findScheme = (ref) => {
    const wanted =
      lower(ref) === 'scheme_current' ? state.active : (schemeAliases[ref?.toUpperCase()] ?? lower(ref));
    return state.plans.find((p) => p.guid === wanted);
  };

  switch (command) {
    case 'list':
    case 'l':
      return answer(state, {
        stdout: [
          '',
          t.header,
          '-----------------------------------',
          ...[...state.plans]
            .sort((a, b) => a.guid.localeCompare(b.guid))
            .map((p) => `${schemeLine(p)}${p.guid === state.active ? ' *' : ''}`),
        ],
      });

    case 'getactivescheme': {
      const active = state.plans.find((p) => p.guid === state.active);
      return active ? answer(state, { stdout: [schemeLine(active)] }) : fail(t.notExist);
    }

    case 'setactive':
    case 's': {
      if (args.length !== 1) return fail(t.invalid);
      if (state.notElevated) return fail(t.admin);
      const target = findScheme(args[0]);
      if (!target) return fail(t.notExist);
      saveState({ ...state, active: target.guid });
      return answer(state, {});
    }

    case 'duplicatescheme': {
      if (args.length < 1 || args.length > 2) return fail(t.invalid);
      if (state.notElevated) return fail(t.admin);
      const source = findScheme(args[0]) ?? state.templates.find((p) => p.guid === lower(args[0]));
      if (!source) return fail(t.notExist);
      const guid = args[1] ? lower(args[1]) : randomUUID();
      if (state.plans.some((p) => p.guid === guid)) return fail(t.invalid);
      const copy = { ...source, guid };
      saveState({ ...state, plans: [...state.plans, copy] });
      return answer(state, { stdout: [schemeLine(copy)] });
    }

    case 'query':
    case 'q':
    case 'qh': {
      if (command === 'qh' && state.noQh) return fail(t.invalid);
      const current = lower(args[0] ?? 'SCHEME_CURRENT') === 'scheme_current';
      const found = findScheme(args[0] ?? 'SCHEME_CURRENT');
      if (!found) return fail(t.notExist);
      // The active scheme as the power manager applies it: settings that do not stick, and policy.
      const plan = current
        ? {
            ...found,
            settings: {
              ...found.settings,
              ...(state.nonSticky ?? {}),
              ...(state.policySettings ?? {}),
            },
          }
        : found;
      const subRef = args[1];
      const subs = subRef
        ? Object.values(SUB).filter((s) => s.guid === lower(subRef) || s.alias === subRef.toUpperCase())
        : Object.values(SUB);
      if (!subs.length) return fail(t.notExist);
      const settingRef = args[2];
      const out = [schemeLine(plan)];
      const alias = Object.entries(schemeAliases).find(([, g]) => g === plan.guid)?.[0];
      if (alias) out.push(`  ${t.alias}: ${alias}`);
      for (const sub of subs) {
        const shown = SETTINGS.filter(
          (s) =>
            s.sub === sub &&
            plan.settings[s.guid] &&
            (command === 'qh' || !s.hidden) &&
            (!settingRef || s.guid === lower(settingRef) || s.alias === settingRef.toUpperCase()),
        );
        out.push(`  ${t.subgroup}: ${sub.guid}  (${sub.name})`, `    ${t.alias}: ${sub.alias}`);
        for (const s of shown) {
          const [ac, dc] = plan.settings[s.guid];
          out.push(`    ${t.setting}: ${s.guid}  (${s.name})`, `      ${t.alias}: ${s.alias}`);
          if (s.range) {
            const [min, max, inc, units] = s.range;
            out.push(
              `      ${t.min}: ${hex(min)}`,
              `      ${t.max}: ${hex(max)}`,
              `      ${t.inc}: ${hex(inc)}`,
              `      ${t.units}: ${units}`,
            );
          } else {
            for (const [i, o] of s.options.entries()) {
              out.push(`      ${t.index}: ${String(i).padStart(3, '0')}`, `      ${t.friendly}: ${o}`);
            }
          }
          out.push(`    ${t.ac}: ${hex(ac)}`, `    ${t.dc}: ${hex(dc)}`, '');
        }
      }
      if (out[out.length - 1] !== '') out.push('');
      return answer(state, { stdout: out });
    }

    case 'aliases':
      return answer(state, {
        stdout: [
          ...Object.entries(schemeAliases).map(([a, g]) => `${g}  ${a}`),
          ...Object.values(SUB).flatMap((sub) => [
            `${sub.guid}  ${sub.alias}`,
            ...SETTINGS.filter((s) => s.sub === sub).map((s) => `${s.guid}    ${s.alias}`),
          ]),
        ],
      });

    default:
      return fail(t.invalid);
  }
};

await main();
