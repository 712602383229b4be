/**
 * A security descriptor in SDDL, as `icacls /save` and .NET's GetSecurityDescriptorSddlForm write
 * it: `O:<sid>G:<sid>D:<flags>(<ace>)(<ace>)...S:<flags>(<ace>)...`, each part optional.
 *
 * An ACE is `type;flags;rights;object guid;inherit object guid;sid`, and a conditional (callback)
 * ACE adds `;(<condition>)`, whose expression has parentheses of its own and may quote strings:
 * `(XA;;0x1200a9;;;BU;(Exists WIN://SYSAPPID))`, `(XA;OICI;FA;;;WD;(Member_of {SID(BA)}))`. So
 * entries are found by counting parentheses outside double quotes, never by the next `)`.
 * What cannot be read is kept as an unparsed entry, for the caller to treat as the worst case.
 * Each part appears at most once: a second owner, group, DACL or SACL (`D:P(A;;FA;;;BU)D:P(...)`,
 * where a careless reader keeps only the last) stops the reading there, and the rest, the
 * repeated part included, is kept as `trailing` text, which the caller treats as unreadable.
 */

export interface Ace {
  /** `A` allow, `D` deny, `OA`/`OD` object, `XA`/`XD`/`ZA` callback (conditional), ... */
  type: string;
  /** Two-letter flags: `OI`, `CI`, `IO`, `NP`, `ID` (inherited), ... */
  flags: string[];
  /** Two-letter codes (`FA`, `DCLCRPCR`) or a number (`0x1200a9`). */
  rights: string;
  objectGuid: string;
  inheritObjectGuid: string;
  /** A SID string (`S-1-5-32-545`) or its two-letter alias (`BU`). */
  sid: string;
  /** The condition or resource attribute after the sid, parentheses included. */
  condition?: string;
}

/** An entry that could not be read: its text, as written. */
export interface UnparsedAce {
  unparsed: string;
}

export interface Acl {
  /** `P` protected, `AI` auto-inherited, `AR`, ... */
  flags: string;
  entries: (Ace | UnparsedAce)[];
}

export interface SecurityDescriptor {
  owner?: string;
  group?: string;
  /** Absent: no DACL part in the text. `null`: a null DACL (`NO_ACCESS_CONTROL`), everyone allowed. */
  dacl?: Acl | null;
  sacl?: Acl | null;
  /** Text after the last part that is no part at all. */
  trailing?: string;
}

const SID = /^(?:S-1-\d+(?:-\d+)+|[A-Z]{2})$/;
const GUID = /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})?$/;

/** The end (exclusive) of the parenthesized group starting at `start`, or -1 when it never closes. */
const groupEnd = (text: string, start: number): number => {
  let depth = 0;
  let quoted = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return -1;
};

const parseAce = (body: string): Ace | UnparsedAce => {
  const fields: string[] = [];
  let rest = body;
  for (let i = 0; i < 5; i++) {
    const at = rest.indexOf(';');
    if (at < 0) return { unparsed: `(${body})` };
    fields.push(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  const at = rest.indexOf(';');
  const sid = at < 0 ? rest : rest.slice(0, at);
  const condition = at < 0 ? undefined : rest.slice(at + 1);
  const [type = '', flags = '', rights = '', objectGuid = '', inheritObjectGuid = ''] = fields;
  const valid =
    /^[A-Z]{1,2}$/.test(type) &&
    /^(?:[A-Z]{2})*$/.test(flags) &&
    /^(?:0[xX][0-9a-fA-F]+|\d+|(?:[A-Z]{2})+)$/.test(rights) &&
    GUID.test(objectGuid) &&
    GUID.test(inheritObjectGuid) &&
    SID.test(sid) &&
    (condition === undefined || (condition.startsWith('(') && groupEnd(condition, 0) === condition.length));
  if (!valid) return { unparsed: `(${body})` };
  return {
    type,
    flags: flags.match(/../g) ?? [],
    rights,
    objectGuid,
    inheritObjectGuid,
    sid,
    ...(condition === undefined ? {} : { condition }),
  };
};

/** The ACL that starts at `start` (after `D:` or `S:`), and where it ends. */
const parseAcl = (text: string, start: number): { acl: Acl | null; end: number } => {
  // The known flags only, so that a part right after them (`D:AIS:...`) is not taken for one.
  const own = /^(?:P|AI|AR|NO_ACCESS_CONTROL)*/.exec(text.slice(start))![0];
  let i = start + own.length;
  if (own.includes('NO_ACCESS_CONTROL')) return { acl: null, end: i };
  const entries: (Ace | UnparsedAce)[] = [];
  while (text[i] === '(') {
    const end = groupEnd(text, i);
    if (end < 0) {
      entries.push({ unparsed: text.slice(i) });
      i = text.length;
      break;
    }
    entries.push(parseAce(text.slice(i + 1, end - 1)));
    i = end;
  }
  return { acl: { flags: own, entries }, end: i };
};

/** Reads a security descriptor string; never throws (what is not understood is kept as such). */
export const parseSddl = (input: string): SecurityDescriptor => {
  const text = input.trim();
  const sd: SecurityDescriptor = {};
  let i = 0;
  const seen = new Set<string>();
  while (i < text.length) {
    const part = text.slice(i, i + 2);
    // A part given twice is never chosen between (fail closed): the rest stays unread.
    if (seen.has(part)) break;
    seen.add(part);
    if (part === 'O:' || part === 'G:') {
      const sid = /^(?:S-1-\d+(?:-\d+)+|[A-Z]{2})/.exec(text.slice(i + 2))?.[0];
      if (!sid) break;
      if (part === 'O:') sd.owner = sid;
      else sd.group = sid;
      i += 2 + sid.length;
    } else if (part === 'D:' || part === 'S:') {
      const { acl, end } = parseAcl(text, i + 2);
      if (part === 'D:') sd.dacl = acl;
      else sd.sacl = acl;
      i = end;
    } else break;
  }
  if (i < text.length) sd.trailing = text.slice(i);
  return sd;
};

export const isUnparsed = (entry: Ace | UnparsedAce): entry is UnparsedAce => 'unparsed' in entry;
