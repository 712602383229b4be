/**
 * Pure parsers for powercfg's decoded output. Every label powercfg prints is localized and moves
 * around between Windows versions, so nothing here reads a word: lines are recognised by GUIDs,
 * `0x` hex numbers, the trailing `*` marker, the parentheses around a name and indentation.
 */

const GUID_SRC = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const GUID_IN_LINE = new RegExp(GUID_SRC);
const GUID_ONLY = new RegExp(`^\\{?(${GUID_SRC})\\}?$`);
const HEX_AT_END = /\b0x([0-9a-fA-F]{1,8})\s*$/;
/** `<label>: SCHEME_MIN`: the value after the last colon (ASCII or full-width) is an identifier. */
const ALIAS_AT_END = /[:\uff1a]\s*([A-Z][A-Z0-9_]*)\s*$/;

/** Normalises a GUID (any case, optional braces) to lowercase; null when `text` is not one. */
export const normalizeGuid = (text: string): string | null => {
  const m = GUID_ONLY.exec(text.trim());
  return m ? m[1]!.toLowerCase() : null;
};

/** Lines without CR, trailing whitespace kept out of the way of the end-anchored patterns. */
const linesOf = (text: string): string[] => text.split(/\r?\n|\r/);

export interface SchemeLine {
  id: string;
  name: string;
  active: boolean;
}

/**
 * One scheme line, as printed by `/list`, `/getactivescheme`, `/duplicatescheme` and as the first
 * line of `/query`:
 *
 *     <label>: <GUID>  (<name>)[ *]
 *
 * e.g. `GUID des Energieschemas: 381b4222-f694-41f0-9685-ff5bb260df2e  (Ausbalanciert) *`.
 * The label is localized and ignored. The name is everything between the first `(` and the last
 * `)` after the GUID, so it may itself contain parentheses (or a `*`). A `*` after the closing
 * parenthesis marks the active scheme. A line without parentheses gives the rest as the name.
 */
export const parseSchemeLine = (line: string): SchemeLine | null => {
  const m = GUID_IN_LINE.exec(line);
  if (!m) return null;
  let rest = line.slice(m.index + m[0].length).trim();
  let active = false;
  if (rest.endsWith('*')) {
    const withoutMarker = rest.slice(0, -1).trimEnd();
    if (withoutMarker.endsWith(')') || withoutMarker === '') {
      active = true;
      rest = withoutMarker;
    }
  }
  const name = rest.startsWith('(') && rest.endsWith(')') ? rest.slice(1, -1) : rest;
  return { id: m[0].toLowerCase(), name, active };
};

/**
 * `powercfg /list`:
 *
 *     (empty line)
 *     <header, e.g. "Existing Power Schemes (* Active)">
 *     -----------------------------------
 *     <label>: <GUID>  (<name>) *
 *     <label>: <GUID>  (<name>)
 *
 * The header may itself contain `(* Active)`, so only lines holding a GUID count.
 */
export const parseSchemeList = (text: string): SchemeLine[] => {
  const out: SchemeLine[] = [];
  for (const line of linesOf(text)) {
    const scheme = parseSchemeLine(line);
    if (scheme && !out.some((s) => s.id === scheme.id)) out.push(scheme);
  }
  return out;
};

/**
 * `powercfg /getactivescheme` (one scheme line, possibly without a final newline) and
 * `powercfg /duplicatescheme` (the new scheme's line). The scheme reported is by definition the
 * active one for `/getactivescheme`; callers decide what `active` means for other commands.
 */
export const parseFirstScheme = (text: string): SchemeLine | null => {
  for (const line of linesOf(text)) {
    const scheme = parseSchemeLine(line);
    if (scheme) return scheme;
  }
  return null;
};

export interface QuerySetting {
  id: string;
  name: string;
  alias: string | null;
  /** GUID of the subgroup the setting is printed under, when the output shows it. */
  subgroupId: string | null;
  /** Current value on mains power (the first current-value line). */
  ac: number | null;
  /** Current value on battery (the second current-value line). */
  dc: number | null;
}

export interface QueryNode {
  id: string;
  name: string;
  alias: string | null;
}

export interface QueryResult {
  scheme: QueryNode | null;
  subgroups: QueryNode[];
  settings: QuerySetting[];
}

interface RawNode {
  id: string;
  name: string;
  alias: string | null;
  indent: number;
  /** Hex values at the node's own indentation or shallower: the current AC/DC values. */
  current: number[];
  /** Index of the nearest enclosing node by indentation. */
  parent: number | null;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

/**
 * `powercfg /query` and `/qh` (`[<scheme> [<subgroup> [<setting>]]]`):
 *
 *     <label>: <scheme GUID>  (<name>)                     indent 0
 *       <label>: SCHEME_MIN                                optional alias line (none on custom schemes)
 *       <label>: <subgroup GUID>  [(<name>)]               indent 2; some subgroups have no name
 *         <label>: SUB_PROCESSOR                           optional alias line
 *         <label>: <setting GUID>  (<name>)                indent 4
 *           <label>: PROCTHROTTLEMIN                       optional alias line
 *           <label>: 0x00000000                            range: minimum, maximum, increment (deeper)
 *           <label>: %                                     units, or possible index/name pairs (000, text)
 *         <label>: 0x00000064                              current AC value (setting's own indent)
 *         <label>: 0x00000005                              current DC value
 *
 * Nesting is by indentation only. A GUID line is a setting when hex values follow it at its own
 * indentation (the first is AC, the second DC, in that order on every Windows version); other GUID
 * lines are the scheme (the shallowest level when two levels of them appear, or a lone level at
 * column 0 with no settings under it) or subgroups. An alias is an all-caps identifier on the line
 * right after a GUID line, indented deeper. Fragments (starting inside a subgroup), trailing
 * whitespace, CRLF and a missing final newline are all accepted.
 */
export const parseQuery = (text: string): QueryResult => {
  const nodes: RawNode[] = [];
  const stack: number[] = [];
  let lastLineWasGuid = false;
  for (const line of linesOf(text)) {
    if (!line.trim()) continue;
    const indent = indentOf(line);
    const scheme = parseSchemeLine(line);
    if (scheme) {
      while (stack.length && nodes[stack[stack.length - 1]!]!.indent >= indent) stack.pop();
      nodes.push({
        id: scheme.id,
        name: scheme.name,
        alias: null,
        indent,
        current: [],
        parent: stack.length ? stack[stack.length - 1]! : null,
      });
      stack.push(nodes.length - 1);
      lastLineWasGuid = true;
      continue;
    }
    const node = nodes[nodes.length - 1];
    if (node) {
      const alias = ALIAS_AT_END.exec(line);
      if (lastLineWasGuid && alias && indent > node.indent) {
        node.alias = alias[1]!;
      } else {
        const hex = HEX_AT_END.exec(line);
        if (hex && indent <= node.indent) node.current.push(Number.parseInt(hex[1]!, 16));
      }
    }
    lastLineWasGuid = false;
  }

  const isSetting = nodes.map((n) => n.current.length > 0);
  const groupIndents = [...new Set(nodes.filter((_, i) => !isSetting[i]).map((n) => n.indent))].sort(
    (a, b) => a - b,
  );
  const hasSettingChild = (i: number) => nodes.some((n, j) => isSetting[j] && n.parent === i);
  const isScheme = (i: number): boolean => {
    const n = nodes[i]!;
    if (isSetting[i] || n.indent !== groupIndents[0]) return false;
    if (groupIndents.length > 1) return true;
    return n.indent === 0 && !hasSettingChild(i);
  };

  const plain = (n: RawNode): QueryNode => ({ id: n.id, name: n.name, alias: n.alias });
  const schemeIndex = nodes.findIndex((_, i) => isScheme(i));
  const result: QueryResult = {
    scheme: schemeIndex >= 0 ? plain(nodes[schemeIndex]!) : null,
    subgroups: [],
    settings: [],
  };
  nodes.forEach((n, i) => {
    if (isScheme(i)) return;
    if (!isSetting[i]) {
      result.subgroups.push(plain(n));
      return;
    }
    const parent = n.parent === null ? null : nodes[n.parent]!;
    result.settings.push({
      ...plain(n),
      subgroupId: parent && !isScheme(n.parent!) ? parent.id : null,
      ac: n.current[0] ?? null,
      dc: n.current[1] ?? null,
    });
  });
  return result;
};

/**
 * `powercfg /aliases`:
 *
 *     <GUID>  <ALIAS>
 *     <GUID>    <ALIAS>        (settings: the nesting is shown by the width of the gap)
 *
 * Returns alias -> lowercase GUID.
 */
export const parseAliases = (text: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const line = new RegExp(`^\\s*(${GUID_SRC})\\s+([A-Z][A-Z0-9_]*)\\s*$`);
  for (const l of linesOf(text)) {
    const m = line.exec(l);
    if (m) out[m[2]!] = m[1]!.toLowerCase();
  }
  return out;
};

/**
 * `reg query <key> [/v <name>]`:
 *
 *     (empty line)
 *     HKEY_LOCAL_MACHINE\SOFTWARE\...
 *         <value name>    REG_<TYPE>    <data>
 *
 * Value names, type names and the data we read (GUIDs, numbers, firmware strings) are not
 * localized. Returns value name -> data.
 */
export const parseRegValues = (text: string): Record<string, string> => {
  const out: Record<string, string> = {};
  const line = /^\s+(\S.*?)\s+(REG_[A-Z_]+)(?:\s+(.*?))?\s*$/;
  for (const l of linesOf(text)) {
    const m = line.exec(l);
    if (m) out[m[1]!] = m[3] ?? '';
  }
  return out;
};

/** `chcp`: "Active code page: 850" in any language (some add a final dot): the last number. */
export const parseChcp = (text: string): number | null => {
  const numbers = text.match(/\d+/g);
  const last = numbers ? Number(numbers[numbers.length - 1]) : Number.NaN;
  return Number.isInteger(last) && last > 0 ? last : null;
};
