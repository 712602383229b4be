/**
 * Text another program chose (a fleet agent's answer, the labels it exposes to Prometheus), made
 * safe to pass on: terminal escape sequences removed whole; line breaks and tabs become one space
 * (so the text can never start a line of its own in a log or a terminal); every other control or
 * format character (Unicode Cc and Cf: NUL, ESC, BEL, C1 controls, bidi overrides and isolates,
 * zero-width characters) and every lone surrogate removed; and cut to MAX_TEXT characters, the cut
 * said at the end. Plain short text (printable ASCII) is returned as it is, cheaply.
 */

/** About how many characters one string of another program's may take in our answers. */
export const MAX_TEXT = 500;

/** ECMA-48 sequences: CSI (`ESC [ ... final`), OSC/DCS/SOS/PM/APC strings up to BEL or ST, two-byte escapes. */
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the job
  /\u001b(?:\[[0-?]*[ -/]*[@-~]?|[\]PX^_][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[ -/]*[0-~]?)|\u009b[0-?]*[ -/]*[@-~]?|[\u0090\u009d\u0098\u009e\u009f][^\u0007\u001b\u009c]*[\u0007\u009c]?/g;
const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]+/g;
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const PLAIN = /^[ -~]*$/;

/** One string made safe; `max` characters at most (plus the marker that says how long it was). */
export const cleanText = (text: string, max = MAX_TEXT): string => {
  if (text.length <= max && PLAIN.test(text)) return text;
  const clean = text.replace(ESCAPE_SEQUENCE, '').replace(BREAKS, ' ').replace(UNSAFE, '');
  if (clean.length <= max) return clean;
  // Cut between characters, never inside a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(clean[max - 1] ?? '') ? max - 1 : max;
  return `${clean.slice(0, end)}… [cut: ${clean.length} characters in all]`;
};

/**
 * Every string of a freshly parsed JSON value (keys too) made safe, in place (an answer of
 * Prometheus for 10,000 hosts holds some 60,000 strings: nothing is copied that is already safe).
 */
export const cleanJson = (value: unknown): unknown => {
  if (typeof value === 'string') return cleanText(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      if (v !== null && typeof v !== 'number' && typeof v !== 'boolean') value[i] = cleanJson(v);
    }
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const v = o[k];
      const clean = v !== null && typeof v !== 'number' && typeof v !== 'boolean' ? cleanJson(v) : v;
      const key = cleanText(k);
      if (key !== k) {
        delete o[k];
        o[key] = clean;
      } else if (clean !== v) o[k] = clean;
    }
  }
  return value;
};

/** JSON text whose strings cannot need cleaning: printable ASCII, no escapes, no string over MAX_TEXT. */
const SAFE_JSON = /^[ -[\]-~]*$/;

/** In JSON text without a backslash the quotes pair up: is any string between them over MAX_TEXT? */
const hasLongString = (text: string): boolean => {
  for (let open = text.indexOf('"'); open >= 0; ) {
    const close = text.indexOf('"', open + 1);
    if (close < 0 || close - open - 1 > MAX_TEXT) return true;
    open = text.indexOf('"', close + 1);
  }
  return false;
};

/**
 * Another program's JSON answer, parsed and made safe (`cleanJson`). The common answer (plain
 * ASCII labels and names) is recognised from its text and not walked at all.
 */
export const parseUntrustedJson = (text: string): unknown => {
  const value: unknown = JSON.parse(text);
  return SAFE_JSON.test(text) && !hasLongString(text) ? value : cleanJson(value);
};
