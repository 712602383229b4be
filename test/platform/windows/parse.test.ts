/**
 * The powercfg parsers against every captured fixture in test/fixtures/powercfg-*: each as
 * captured, as CRLF, and as CRLF re-encoded in its locale's OEM code page and decoded the way the
 * backend decodes piped output.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import iconv from 'iconv-lite';
import { asUtf8, decodeOutput } from '../../../src/platform/windows/decode.ts';
import {
  normalizeGuid,
  parseAliases,
  parseChcp,
  parseFirstScheme,
  parseQuery,
  parseRegValues,
  parseSchemeLine,
  parseSchemeList,
  type QueryResult,
  type SchemeLine,
} from '../../../src/platform/windows/parse.ts';
import { classifyPowercfgFailure } from '../../../src/platform/windows/powercfg-errors.ts';
import { SCHEME, SETTING } from '../../../src/platform/windows/well-known.ts';

const fixtures = join(import.meta.dirname, '..', '..', 'fixtures');
const read = (folder: string, name: string) => readFileSync(join(fixtures, folder, `${name}.txt`), 'utf8');

/** OEM code page of each captured locale. */
const codepageOf = (name: string): number =>
  name.startsWith('de-DE') ? 850 : name.startsWith('zh-CN') ? 936 : name.startsWith('ko-KR') ? 949 : 437;

/** The fixture as captured, as CRLF, and as CRLF bytes in its OEM code page run through the decoder. */
const variants = async (folder: string, name: string): Promise<[string, string][]> => {
  const text = read(folder, name);
  const crlf = text.replace(/\r?\n/g, '\r\n');
  const cp = codepageOf(name);
  const bytes = iconv.encode(crlf, `cp${cp}`);
  assert.equal(iconv.decode(bytes, `cp${cp}`), crlf, `the fixture is representable in code page ${cp}`);
  if (/[^ -~\r\n\t]/.test(text)) {
    assert.equal(asUtf8(bytes), null, 'the re-encoded bytes take the code page path, not the UTF-8 one');
  }
  const decoded = await decodeOutput(bytes, async () => cp);
  return [
    ['as captured', text],
    ['CRLF', crlf],
    [`CRLF in code page ${cp}`, decoded],
  ];
};

const scheme = (id: string, name: string, active = false): SchemeLine => ({ id, name, active });

const listCases: Record<string, SchemeLine[]> = {
  'de-DE-dcs-server-readme-balanced-active': [
    scheme(SCHEME.balanced, 'Ausbalanciert', true),
    scheme(SCHEME.highPerformance, 'Höchstleistung'),
    scheme(SCHEME.powerSaver, 'Energiesparmodus'),
  ],
  'en-US-batch-rem-custom-plans-COMMENTED': [
    scheme('1da4abb2-0808-40a8-99dc-0044cec64234', 'My Custom Plan 1', true),
    scheme(SCHEME.balanced, 'Balanced'),
    scheme(SCHEME.highPerformance, 'High performance'),
    scheme('9800006f-8c62-40c0-806c-71e3349f154e', 'Recommended Settings'),
    scheme(SCHEME.powerSaver, 'Power saver'),
  ],
  'en-US-readme-win11-custom-plan': [
    scheme(SCHEME.balanced, 'Balanced'),
    scheme('6d5da386-1e15-4830-bcc3-f4b1d9ef7d86', 'HighPerf-selfcreated'),
    scheme(SCHEME.highPerformance, 'High performance', true),
  ],
  'en-US-win11-readme-only-balanced': [scheme(SCHEME.balanced, 'Balanced', true)],
  'ko-KR-note-balanced-active': [
    scheme(SCHEME.balanced, '균형 조정', true),
    scheme(SCHEME.highPerformance, '고성능'),
    scheme(SCHEME.powerSaver, '절전'),
  ],
  'zh-CN-notes-balanced-active': [
    scheme(SCHEME.balanced, '平衡', true),
    scheme(SCHEME.highPerformance, '高性能'),
    scheme(SCHEME.powerSaver, '节能'),
    scheme(SCHEME.ultimateTemplate, '卓越性能'),
  ],
};

describe('powercfg /list fixtures', () => {
  for (const [name, expected] of Object.entries(listCases)) {
    it(name, async () => {
      for (const [variant, text] of await variants('powercfg-list', name)) {
        assert.deepEqual(parseSchemeList(text), expected, variant);
      }
    });
  }
});

const activeCases: Record<string, SchemeLine> = {
  'de-DE-aorus-inspection-report-balanced': scheme(SCHEME.balanced, 'Ausbalanciert'),
  'zh-CN-smoketest-report-balanced': scheme(SCHEME.balanced, '平衡'),
};

describe('powercfg /getactivescheme fixtures', () => {
  for (const [name, expected] of Object.entries(activeCases)) {
    it(name, async () => {
      for (const [variant, text] of await variants('powercfg-getactivescheme', name)) {
        assert.deepEqual(parseFirstScheme(text), expected, variant);
      }
    });
  }
});

const setting = (q: QueryResult, id: string) => q.settings.find((s) => s.id === id);

describe('powercfg /query fixtures', () => {
  it('en-GB-melon-readme-q-full-MelonV3: custom scheme, no scheme alias, unnamed subgroup', async () => {
    const raw = read('powercfg-query', 'en-GB-melon-readme-q-full-MelonV3');
    const settingLines = raw.split('\n').filter((l) => /^ {4}\S.*: [0-9a-f-]{36}/.test(l)).length;
    const subgroupLines = raw.split('\n').filter((l) => /^ {2}\S.*: [0-9a-f-]{36}/.test(l)).length;
    for (const [variant, text] of await variants('powercfg-query', 'en-GB-melon-readme-q-full-MelonV3')) {
      const q = parseQuery(text);
      assert.deepEqual(
        q.scheme,
        { id: '9712253e-f58d-4b9a-a12b-70463d94d896', name: 'MelonV3', alias: null },
        variant,
      );
      assert.equal(q.settings.length, settingLines, variant);
      assert.equal(q.subgroups.length, subgroupLines, variant);
      assert.ok(
        q.settings.every((s) => s.ac !== null && s.dc !== null && s.subgroupId !== null),
        variant,
      );
      assert.deepEqual(
        q.subgroups.find((s) => s.id === '9596fb26-9850-41fd-ac3e-f7c3c00afd4b'),
        { id: '9596fb26-9850-41fd-ac3e-f7c3c00afd4b', name: '', alias: null },
        `${variant}: a subgroup without a name`,
      );
      assert.deepEqual(setting(q, SETTING.minState), {
        id: SETTING.minState,
        name: 'Minimum processor state',
        alias: 'PROCTHROTTLEMIN',
        subgroupId: '54533251-82be-4824-96c1-47b60b740d00',
        ac: 100,
        dc: 5,
      });
      assert.deepEqual(
        [setting(q, SETTING.maxState)?.ac, setting(q, SETTING.maxState)?.dc],
        [100, 100],
        variant,
      );
      const brightness = setting(q, 'aded5e82-b909-4619-9949-f5d71dac0bcb');
      assert.equal(brightness?.alias, null, `${variant}: a setting without an alias line`);
      assert.equal(brightness?.subgroupId, '7516b95f-f776-4464-8c53-06167f40cc99', variant);
      assert.equal(setting(q, '3c0bc021-c8a8-4e07-a973-6b14cbcb2b7e')?.dc, 0x258, variant);
      assert.deepEqual(
        [
          setting(q, 'f3c5027d-cd16-4930-aa6b-90db844a8f00')?.ac,
          setting(q, 'f3c5027d-cd16-4930-aa6b-90db844a8f00')?.dc,
        ],
        [7, 7],
        `${variant}: the last setting of the dump`,
      );
    }
  });

  it('en-US-batterysim-issue11-q-FRAGMENT-processor: starts inside a subgroup', async () => {
    for (const [variant, text] of await variants(
      'powercfg-query',
      'en-US-batterysim-issue11-q-FRAGMENT-processor',
    )) {
      const q = parseQuery(text);
      assert.equal(q.scheme, null, variant);
      assert.deepEqual(q.subgroups, [
        { id: '7516b95f-f776-4464-8c53-06167f40cc99', name: 'Display', alias: 'SUB_VIDEO' },
      ]);
      assert.deepEqual(
        q.settings.map((s) => [s.id, s.alias, s.subgroupId, s.ac, s.dc]),
        [
          ['94d3a615-a899-4ac5-ae2b-e4d8f634367f', 'SYSCOOLPOL', null, 1, 0],
          [SETTING.maxState, 'PROCTHROTTLEMAX', null, 100, 100],
          [
            '3c0bc021-c8a8-4e07-a973-6b14cbcb2b7e',
            'VIDEOIDLE',
            '7516b95f-f776-4464-8c53-06167f40cc99',
            600,
            300,
          ],
        ],
        variant,
      );
    }
  });

  it('zh-CN-notes-query-highperf-sub-sleep: localized labels, trailing tabs', async () => {
    for (const [variant, text] of await variants('powercfg-query', 'zh-CN-notes-query-highperf-sub-sleep')) {
      const q = parseQuery(text);
      assert.deepEqual(
        q.scheme,
        { id: SCHEME.highPerformance, name: '高性能', alias: 'SCHEME_MIN' },
        variant,
      );
      assert.deepEqual(q.subgroups, [
        { id: '238c9fa8-0aad-41ed-83f4-97be242c8f20', name: '睡眠', alias: 'SUB_SLEEP' },
      ]);
      assert.deepEqual(
        q.settings.map((s) => [s.alias, s.name, s.subgroupId, s.ac, s.dc]),
        [
          ['STANDBYIDLE', '在此时间后睡眠', '238c9fa8-0aad-41ed-83f4-97be242c8f20', 0, 0],
          ['HYBRIDSLEEP', '允许混合睡眠', '238c9fa8-0aad-41ed-83f4-97be242c8f20', 1, 1],
          ['HIBERNATEIDLE', '在此时间后休眠', '238c9fa8-0aad-41ed-83f4-97be242c8f20', 0, 0],
          ['RTCWAKE', '允许使用唤醒定时器', '238c9fa8-0aad-41ed-83f4-97be242c8f20', 1, 1],
        ],
        variant,
      );
    }
  });

  it('en-US-aliases-blog-2018-PARTIAL: /aliases, nesting by gap width', async () => {
    for (const [variant, text] of await variants('powercfg-query', 'en-US-aliases-blog-2018-PARTIAL')) {
      assert.deepEqual(
        parseAliases(text),
        {
          SCHEME_MAX: SCHEME.powerSaver,
          SCHEME_MIN: SCHEME.highPerformance,
          SCHEME_BALANCED: SCHEME.balanced,
          SUB_BATTERY: 'e73a048d-bf27-4f12-9731-8b2076e8891f',
          BATACTIONCRIT: '637ea02f-bbcb-4015-8e2c-a1c7b9c0b546',
          BATACTIONLOW: 'd8742dcb-3e6a-4b3c-b3fe-374623cdcf06',
          BATFLAGSCRIT: '5dbb7c9f-38e9-40d2-9749-4f8a0e9f640f',
        },
        variant,
      );
    }
  });
});

describe('powercfg error fixtures', () => {
  it('en-US-requests-needs-admin-explorerpatcher3936: needs elevation', async () => {
    for (const [variant, text] of await variants(
      'powercfg-errors',
      'en-US-requests-needs-admin-explorerpatcher3936',
    )) {
      assert.equal(classifyPowercfgFailure(text), 'forbidden', variant);
    }
  });

  it('zh-CN-waketimers-needs-admin-smoketest: needs elevation, in Chinese', async () => {
    for (const [variant, text] of await variants(
      'powercfg-errors',
      'zh-CN-waketimers-needs-admin-smoketest',
    )) {
      assert.equal(classifyPowercfgFailure(text), 'forbidden', variant);
      assert.equal(classifyPowercfgFailure(`${text}\r\n`), 'forbidden', `${variant} with its CRLF`);
    }
  });

  it('en-US-winutil1119-scheme-not-exist-and-invalid-params-MIXED: one powercfg line each', async () => {
    for (const [variant, text] of await variants(
      'powercfg-errors',
      'en-US-winutil1119-scheme-not-exist-and-invalid-params-MIXED',
    )) {
      const lines = text.split(/\r?\n/);
      assert.equal(classifyPowercfgFailure(lines[1]!), 'not_found', variant);
      assert.equal(classifyPowercfgFailure(lines[2]!), 'invalid_parameters', variant);
    }
  });

  it('leaves a message it does not know as unknown', () => {
    assert.equal(classifyPowercfgFailure('Odottamaton virhe 0x65b.'), 'unknown');
  });
});

describe('line grammar beyond the captures', () => {
  it('names with parentheses, a `*` inside the name, trailing whitespace, no final newline', () => {
    const g = '1da4abb2-0808-40a8-99dc-0044cec64234';
    assert.deepEqual(parseSchemeLine(`X: ${g}  (Plan (old) copy) *  \t`), scheme(g, 'Plan (old) copy', true));
    assert.deepEqual(parseSchemeLine(`X: ${g}  (Fast *)`), scheme(g, 'Fast *'));
    assert.deepEqual(parseSchemeLine(`X: ${g}  (Fast *) *`), scheme(g, 'Fast *', true));
    assert.deepEqual(parseSchemeLine(`X: ${g.toUpperCase()}`), scheme(g, ''));
    assert.deepEqual(parseSchemeList(`\r\nHeader (* Active)\r\n---\r\nA: ${g}  (a) *`), [
      scheme(g, 'a', true),
    ]);
  });

  it('any name and any label without a GUID round-trip through a scheme line', () => {
    const g = '6d5da386-1e15-4830-bcc3-f4b1d9ef7d86';
    const noBreak = (s: string) => !/[\r\n]/.test(s);
    fc.assert(
      fc.property(
        fc.string().filter(noBreak),
        fc.string().filter(noBreak),
        fc.boolean(),
        (label, name, active) => {
          const line = `${label}: ${g}  (${name})${active ? ' *' : ''}\r`;
          assert.deepEqual(parseSchemeLine(line), scheme(g, name, active));
        },
      ),
    );
  });

  it('normalizes GUIDs with braces and capitals, and refuses anything else', () => {
    assert.equal(normalizeGuid('{8C5E7FDA-E8BF-4A96-9A85-A6E23A8C635C}'), SCHEME.highPerformance);
    assert.equal(normalizeGuid(`${SCHEME.balanced} & calc`), null);
    assert.equal(normalizeGuid('SCHEME_MIN'), null);
  });

  it('reads reg query values and chcp answers', () => {
    const reg =
      '\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Policies\\Microsoft\\Power\\PowerSettings\r\n    ActivePowerScheme    REG_SZ    8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c\r\n\r\n';
    assert.deepEqual(parseRegValues(reg), { ActivePowerScheme: SCHEME.highPerformance });
    assert.deepEqual(parseRegValues('    System Product Name    REG_SZ    Virtual Machine'), {
      'System Product Name': 'Virtual Machine',
    });
    assert.equal(parseChcp('Active code page: 850\r\n'), 850);
    assert.equal(parseChcp('Aktive Codepage: 850.\r\n'), 850);
    assert.equal(parseChcp('活动代码页: 936'), 936);
    assert.equal(parseChcp('nothing'), null);
  });
});
