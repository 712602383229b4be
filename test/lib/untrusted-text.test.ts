/**
 * Another program's text made safe: terminal escapes, control and format characters, line breaks
 * and lone surrogates gone, long text cut with a marker; plain text untouched.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cleanJson, cleanText, MAX_TEXT, parseUntrustedJson } from '../../src/lib/untrusted-text.ts';

/** Anything a terminal, a log or a bidi-aware display would act on. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

describe('untrusted text', () => {
  it('keeps plain text as it is', () => {
    for (const s of [
      'Balanced',
      'High performance',
      'Höchstleistung',
      'Ausbalanciert (empfohlen)',
      '省电',
      '🔋 eco',
    ])
      assert.equal(cleanText(s), s);
  });

  it('removes terminal escape sequences whole: OSC title, CSI colours and cursor moves, C1 CSI', () => {
    assert.equal(cleanText('\u001b]0;pwned\u0007Balanced'), 'Balanced');
    assert.equal(cleanText('\u001b]2;pwned\u001b\\Balanced'), 'Balanced');
    assert.equal(cleanText('\u001b[31;1mred\u001b[0m \u001b[2J\u001b[1A\u001b[Kplain'), 'red plain');
    assert.equal(cleanText('a\u009b31mb'), 'ab');
    assert.equal(cleanText('a\u001bcb'), 'ab', 'a two-byte escape (RIS)');
  });

  it('turns line breaks into one space, so no text starts a line of its own', () => {
    const forged = 'conflict\n2026-12-01T12:00:00.000Z INFO plan changed by admin\r\n';
    assert.equal(cleanText(forged), 'conflict 2026-12-01T12:00:00.000Z INFO plan changed by admin ');
    assert.equal(cleanText('a\u2028b\u2029c\u0085d\te'), 'a b c d e');
  });

  it('removes NUL, BEL, bidi overrides and isolates, zero-width characters and lone surrogates', () => {
    assert.equal(cleanText('a\u0000b\u0007c'), 'abc');
    assert.equal(cleanText('\u202Egnp.exe\u202C \u2066x\u2069 \u200Bz\uFEFF'), 'gnp.exe x z');
    assert.equal(cleanText('a\uD800b\uDFFFc'), 'abc');
    assert.equal(cleanText('pair \uD83D\uDD0B kept'), 'pair 🔋 kept');
  });

  it('cuts long text to MAX_TEXT characters and says so; never inside a surrogate pair', () => {
    const long = cleanText('x'.repeat(3 * 1024 * 1024));
    assert.ok(long.startsWith('x'.repeat(MAX_TEXT)));
    assert.match(long, /^x{500}… \[cut: 3145728 characters in all\]$/);
    const emoji = cleanText(`${'x'.repeat(MAX_TEXT - 1)}🔋🔋`);
    assert.doesNotMatch(emoji, UNSAFE, 'no half of a pair left');
    assert.match(emoji, /… \[cut/);
  });

  it('cleans every string of a parsed answer, keys too', () => {
    const answer = JSON.parse(
      '{"plan":{"name":"\\u001b]0;t\\u0007B\\u0000al","n":1},"list":["\\ud800x",true,null],"k\\u202e":"v"}',
    );
    assert.deepEqual(cleanJson(answer), { plan: { name: 'Bal', n: 1 }, list: ['x', true, null], k: 'v' });
  });

  it('parses an answer and cleans it, unless its text shows nothing to clean', () => {
    const plain = '{"a":"High performance","b":[1,"x"]}';
    assert.deepEqual(parseUntrustedJson(plain), { a: 'High performance', b: [1, 'x'] });
    assert.deepEqual(parseUntrustedJson('{"a":"x\\u001b[2Jy","b\\n":"\\u202e"}'), { a: 'xy', 'b ': '' });
    assert.deepEqual(parseUntrustedJson('{"é":"ü\\u0007"}'), { é: 'ü' });
    const long = parseUntrustedJson(JSON.stringify({ a: 'x'.repeat(MAX_TEXT + 1), b: 'y' })) as { a: string };
    assert.match(long.a, /… \[cut: 501 characters in all\]$/);
    assert.throws(() => parseUntrustedJson('{"a":'), SyntaxError);
  });
});
