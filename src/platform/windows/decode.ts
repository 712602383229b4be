/**
 * Turns the bytes of a piped Windows console command into text. Piped output of powercfg and reg
 * is in the OEM code page of the system locale (850 for German, 936 for Chinese, 949 for Korean,
 * 437 for US English, ...), not UTF-8; a console set to UTF-8 (chcp 65001) or a tool that writes
 * UTF-8 gives valid UTF-8, which is taken as it is.
 */
import iconv from 'iconv-lite';

/** US English OEM code page: the answer when nothing better is known. */
export const DEFAULT_OEM_CODEPAGE = 437;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The text when `bytes` is valid UTF-8 (a BOM is dropped), otherwise null. */
export const asUtf8 = (bytes: Uint8Array): string | null => {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
};

/** iconv-lite's name for a Windows code page number, or null when it has no table for it. */
export const codepageEncoding = (codepage: number): string | null => {
  if (codepage === 65001) return 'utf8';
  const name = `cp${codepage}`;
  return iconv.encodingExists(name) ? name : null;
};

/** Decodes in the given code page (an unknown one falls back to 437, which maps every byte). */
export const decodeCodepage = (bytes: Uint8Array, codepage: number): string =>
  iconv.decode(Buffer.from(bytes), codepageEncoding(codepage) ?? `cp${DEFAULT_OEM_CODEPAGE}`);

/**
 * Valid UTF-8 as it is; anything else in the OEM code page, which is only asked for (it may cost a
 * registry lookup) when needed. A few short byte strings of double-byte code pages happen to be
 * valid UTF-8 too; whole command outputs practically never are.
 */
export const decodeOutput = async (
  bytes: Uint8Array,
  oemCodepage: () => Promise<number>,
): Promise<string> => {
  if (bytes.length === 0) return '';
  return asUtf8(bytes) ?? decodeCodepage(bytes, await oemCodepage());
};
