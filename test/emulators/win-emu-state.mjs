// Shared by the Windows command emulators (powercfg.mjs, reg-win.mjs): the JSON state file, the
// argv log, CRLF output in a chosen code page, and a stock state to start from.
//
// State file (path in POWERPLAN_EMU_STATE; without it a stock en-US state in the temp directory):
// {
//   "locale": "en-US" | "de-DE" | "zh-CN" | "ko-KR",   labels and messages (see powercfg.mjs)
//   "codepage": 437,                 code page of the output bytes (65001 = UTF-8)
//   "active": "<GUID>",
//   "plans": [{ "guid", "name", "settings": { "<setting GUID>": [ac, dc] } }],
//   "templates": [...same shape],    hidden default schemes /duplicatescheme may copy
//   "delayMs": 0,                    answer late
//   "hang": false | true | ["/list", ...],   never answer (all calls, or these commands)
//   "notElevated": false,            /setactive and /duplicatescheme refused for lack of rights
//   "noQh": false,                   a Windows without /qh (2012 R2 and older)
//   "policy": null | "<GUID>",       group policy ActivePowerScheme (read by reg-win.mjs)
//   "oemcp": 437,                    registry OEMCP (reg-win.mjs; default: codepage)
//   "firmware": { "SystemManufacturer": "...", "SystemProductName": "..." },
//   "nonSticky": { "<setting GUID>": [ac, dc] },  the active scheme reports these values whatever
//                                    the plan says (a setting that does not stick)
//   "policySettings": { "<setting GUID>": [ac, dc] },  group policy pins single settings: reg answers
//                                    PowerSettings\<GUID> ACSettingIndex/DCSettingIndex, and the active
//                                    scheme reports the pinned values
//   "events": "<Event>...</Event>..." | null,  what wevtutil.mjs prints for the System log query
//   "eventsFile": "<path>",          or a file to print instead (a captured export)
//   "wevtutilFails": false           wevtutil answers access denied
// }
// Every argv is appended as a JSON line to POWERPLAN_EMU_LOG when set.
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SCHEME = {
  balanced: '381b4222-f694-41f0-9685-ff5bb260df2e',
  highPerformance: '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c',
  powerSaver: 'a1841308-3541-4fab-bc81-f71556f20b4a',
  ultimate: 'e9a42b02-d5df-448d-aa00-03f14749eb61',
};

export const S = {
  idleDisable: '5d76a2ca-e8c0-402f-a133-2158492d58ad',
  minState: '893dee8e-2bef-41e0-89c6-b55d0929964c',
  coolingPolicy: '94d3a615-a899-4ac5-ae2b-e4d8f634367f',
  maxState: 'bc5038f7-23e0-4960-96da-33abaf5935ec',
  boostMode: 'be337238-0d82-4146-a960-4f3749d470c7',
  epp: '36687f9e-e3a5-4dbf-b1dc-15eb381c6863',
  coreParkingMinCores: '0cc5b647-c1df-4637-891a-dec35c318583',
  perfIncreaseThreshold: '06cadf0e-64ed-448a-8927-ce7bf90eb35d',
  perfIncreaseTime: '984cf492-3bed-4488-a8f9-4286c97bf5aa',
  personality: '245d8541-3943-4422-b025-13a784f679b7',
  idleStateMax: '9943e905-9a30-4ec1-9b99-44dd3b76f7a2',
  idlePromote: '7b224883-b3cc-4d79-819f-8374152cbe7c',
  idleDemote: '4b92d758-5a24-4851-a470-815d78aee119',
};

/** Plan names as captured in test/fixtures/powercfg-list; the de-DE and ko-KR Ultimate names are not from a capture. */
const names = {
  'en-US': ['Balanced', 'High performance', 'Power saver', 'Ultimate Performance'],
  'de-DE': ['Ausbalanciert', 'Höchstleistung', 'Energiesparmodus', 'Ultimative Leistung'],
  'zh-CN': ['平衡', '高性能', '节能', '卓越性能'],
  'ko-KR': ['균형 조정', '고성능', '절전', '최고의 성능'],
};

const processor = (min, max, boost, epp, cores, incThreshold, incTime, personality) => ({
  [S.idleDisable]: [0, 0],
  [S.minState]: min,
  [S.coolingPolicy]: [1, 0],
  [S.maxState]: max,
  [S.boostMode]: boost,
  [S.epp]: epp,
  [S.coreParkingMinCores]: cores,
  [S.perfIncreaseThreshold]: incThreshold,
  [S.perfIncreaseTime]: incTime,
  [S.personality]: [personality, personality],
  [S.idleStateMax]: [0, 0],
  [S.idlePromote]: [60, 40],
  [S.idleDemote]: [40, 20],
});

/** A stock Windows Server in a locale: Balanced active, High performance, Power saver; Ultimate as a template. */
export const stockState = (locale = 'en-US', codepage = 437) => {
  const [balanced, high, saver, ultimate] = names[locale] ?? names['en-US'];
  const hpSettings = processor([100, 100], [100, 100], [1, 1], [0, 0], [100, 100], [30, 30], [1, 1], 1);
  return {
    locale,
    codepage,
    active: SCHEME.balanced,
    plans: [
      {
        guid: SCHEME.balanced,
        name: balanced,
        settings: processor([5, 5], [100, 100], [1, 1], [50, 50], [10, 10], [60, 80], [3, 3], 2),
      },
      { guid: SCHEME.highPerformance, name: high, settings: hpSettings },
      {
        guid: SCHEME.powerSaver,
        name: saver,
        settings: processor([5, 5], [100, 70], [0, 0], [100, 100], [10, 10], [90, 90], [3, 3], 0),
      },
    ],
    templates: [
      { guid: SCHEME.ultimate, name: ultimate, settings: hpSettings },
      { guid: SCHEME.highPerformance, name: high, settings: hpSettings },
    ],
    delayMs: 0,
    hang: false,
    notElevated: false,
    noQh: false,
    policy: null,
    oemcp: null,
    firmware: { SystemManufacturer: 'Dell Inc.', SystemProductName: 'PowerEdge R650' },
  };
};

const statePath = () =>
  process.env.POWERPLAN_EMU_STATE || join(tmpdir(), 'powerplan-powercfg-emu-state.json');

export const loadState = () => {
  const path = statePath();
  if (!existsSync(path)) saveState(stockState());
  return JSON.parse(readFileSync(path, 'utf8'));
};

export const saveState = (state) => {
  const path = statePath();
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  // Windows refuses to rename onto a file another process is reading at that instant (EPERM), as
  // src/lib/replace-file.ts knows: try again for up to a second there.
  for (let tries = 0; ; tries++) {
    try {
      renameSync(tmp, path);
      return;
    } catch (e) {
      if (process.platform !== 'win32' || !['EPERM', 'EACCES', 'EBUSY'].includes(e.code) || tries >= 100)
        throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
};

export const logArgv = (tool) => {
  const log = process.env.POWERPLAN_EMU_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ tool, argv: process.argv.slice(2) })}\n`);
};

/** Lines joined with CRLF and encoded as a Windows console would write them to a pipe. */
export const encode = async (lines, codepage) => {
  const text = lines.map((l) => `${l}\r\n`).join('');
  // ASCII is the same in every code page; iconv-lite is loaded only when it matters (start-up cost).
  if (codepage === 65001 || !/[^ -~\r\n\t]/.test(text)) return Buffer.from(text, 'utf8');
  const { default: iconv } = await import('iconv-lite');
  return iconv.encode(text, `cp${codepage}`);
};

export const answer = async (state, { stdout = [], stderr = [], code = 0 }) => {
  if (stdout.length) process.stdout.write(await encode(stdout, state.codepage));
  if (stderr.length) process.stderr.write(await encode(stderr, state.codepage));
  process.exitCode = code;
};

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Never answers; the caller's timeout has to kill the process. */
export const hangForever = () => setInterval(() => {}, 1 << 30);
