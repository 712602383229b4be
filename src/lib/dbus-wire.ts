/**
 * The D-Bus wire format (D-Bus Specification, "Message Protocol"): values marshalled by signature
 * in little-endian order with the spec's alignment, and messages (fixed header, header fields,
 * body) built and split from a byte stream. Only what a client of system daemons needs: no file
 * descriptors. Variants unmarshal to their bare value; `Variant` marshals one with its signature.
 */

// Fields declared apart, not as parameter properties: Node's own type stripping (which runs the
// sources as Windows processes) does not take those.
export class Variant {
  readonly signature: string;
  readonly value: unknown;
  constructor(signature: string, value: unknown) {
    this.signature = signature;
    this.value = value;
  }
}

const ALIGN: Record<string, number> = {
  y: 1,
  b: 4,
  n: 2,
  q: 2,
  i: 4,
  u: 4,
  x: 8,
  t: 8,
  d: 8,
  s: 4,
  o: 4,
  g: 1,
  a: 4,
  '(': 8,
  '{': 8,
  v: 1,
  h: 4,
};

/** The end (exclusive) of the single complete type starting at `i`. */
const typeEnd = (sig: string, i: number): number => {
  const c = sig[i];
  if (c === 'a') return typeEnd(sig, i + 1);
  if (c === '(' || c === '{') {
    const close = c === '(' ? ')' : '}';
    let j = i + 1;
    while (sig[j] !== close) {
      if (j >= sig.length) throw new Error(`D-Bus signature ${sig}: unclosed ${c}`);
      j = typeEnd(sig, j);
    }
    return j + 1;
  }
  if (c === undefined || !(c in ALIGN)) throw new Error(`D-Bus signature ${sig}: bad type at ${i}`);
  return i + 1;
};

/** A signature split into its complete types: "sa{sv}" -> ["s", "a{sv}"]. */
export const splitSignature = (sig: string): string[] => {
  const out: string[] = [];
  for (let i = 0; i < sig.length; ) {
    const end = typeEnd(sig, i);
    out.push(sig.slice(i, end));
    i = end;
  }
  return out;
};

const inner = (t: string): string[] => splitSignature(t.slice(1, -1));

class Writer {
  #buf = Buffer.alloc(256);
  length = 0;
  #room(n: number) {
    if (this.length + n <= this.#buf.length) return;
    const next = Buffer.alloc(Math.max(this.#buf.length * 2, this.length + n));
    this.#buf.copy(next, 0, 0, this.length);
    this.#buf = next;
  }
  align(n: number) {
    const pad = (n - (this.length % n)) % n;
    this.#room(pad);
    this.#buf.fill(0, this.length, this.length + pad);
    this.length += pad;
  }
  bytes(b: Buffer) {
    this.#room(b.length);
    b.copy(this.#buf, this.length);
    this.length += b.length;
  }
  u32(v: number) {
    this.align(4);
    this.#room(4);
    this.#buf.writeUInt32LE(v, this.length);
    this.length += 4;
  }
  setU32(at: number, v: number) {
    this.#buf.writeUInt32LE(v, at);
  }
  scalar(t: string, v: unknown) {
    const size = ALIGN[t]!;
    this.align(size);
    this.#room(size);
    const b = this.#buf;
    const at = this.length;
    if (t === 'y') b.writeUInt8(Number(v), at);
    else if (t === 'b') b.writeUInt32LE(v ? 1 : 0, at);
    else if (t === 'n') b.writeInt16LE(Number(v), at);
    else if (t === 'q') b.writeUInt16LE(Number(v), at);
    else if (t === 'i') b.writeInt32LE(Number(v), at);
    else if (t === 'u' || t === 'h') b.writeUInt32LE(Number(v), at);
    else if (t === 'x') b.writeBigInt64LE(BigInt(v as bigint), at);
    else if (t === 't') b.writeBigUInt64LE(BigInt(v as bigint), at);
    else b.writeDoubleLE(Number(v), at);
    this.length += size;
  }
  string(t: string, v: string) {
    const text = Buffer.from(v, 'utf8');
    if (t === 'g') this.scalar('y', text.length);
    else this.u32(text.length);
    this.bytes(text);
    this.bytes(Buffer.of(0));
  }
  value(t: string, v: unknown): void {
    const c = t[0]!;
    if (c === 's' || c === 'o' || c === 'g') {
      this.string(c, String(v));
      return;
    }
    if (c === 'v') {
      const variant = v as Variant;
      this.string('g', variant.signature);
      this.value(variant.signature, variant.value);
      return;
    }
    if (c === '(' || c === '{') {
      this.align(8);
      const items = v as unknown[];
      for (const [k, it] of inner(t).entries()) this.value(it, items[k]);
      return;
    }
    if (c === 'a') {
      const element = t.slice(1);
      this.u32(0);
      const lengthAt = this.length - 4;
      this.align(ALIGN[element[0]!]!);
      const start = this.length;
      const items: unknown[] =
        element[0] === '{' && !Array.isArray(v)
          ? Object.entries(v as Record<string, unknown>)
          : (v as unknown[]);
      for (const item of items) this.value(element, item);
      this.setU32(lengthAt, this.length - start);
      return;
    }
    this.scalar(c, v);
  }
  done(): Buffer {
    return this.#buf.subarray(0, this.length);
  }
}

class Reader {
  readonly buf: Buffer;
  at: number;
  constructor(buf: Buffer, at: number) {
    this.buf = buf;
    this.at = at;
  }
  align(n: number) {
    this.at += (n - (this.at % n)) % n;
  }
  scalar(t: string): unknown {
    const size = ALIGN[t]!;
    this.align(size);
    if (this.at + size > this.buf.length) throw new Error('D-Bus message truncated');
    const b = this.buf;
    const at = this.at;
    this.at += size;
    if (t === 'y') return b.readUInt8(at);
    if (t === 'b') return b.readUInt32LE(at) !== 0;
    if (t === 'n') return b.readInt16LE(at);
    if (t === 'q') return b.readUInt16LE(at);
    if (t === 'i') return b.readInt32LE(at);
    if (t === 'u' || t === 'h') return b.readUInt32LE(at);
    if (t === 'x') return b.readBigInt64LE(at);
    if (t === 't') return b.readBigUInt64LE(at);
    return b.readDoubleLE(at);
  }
  string(t: string): string {
    const n = t === 'g' ? (this.scalar('y') as number) : (this.scalar('u') as number);
    if (this.at + n + 1 > this.buf.length) throw new Error('D-Bus message truncated');
    const s = this.buf.toString('utf8', this.at, this.at + n);
    this.at += n + 1;
    return s;
  }
  value(t: string): unknown {
    const c = t[0]!;
    if (c === 's' || c === 'o' || c === 'g') return this.string(c);
    if (c === 'v') return this.value(this.string('g'));
    if (c === '(' || c === '{') {
      this.align(8);
      return inner(t).map((it) => this.value(it));
    }
    if (c === 'a') {
      const element = t.slice(1);
      const n = this.scalar('u') as number;
      this.align(ALIGN[element[0]!]!);
      const end = this.at + n;
      if (end > this.buf.length) throw new Error('D-Bus message truncated');
      const items: unknown[] = [];
      while (this.at < end) items.push(this.value(element));
      return element[0] === '{' ? Object.fromEntries(items as [string, unknown][]) : items;
    }
    return this.scalar(c);
  }
}

/** The values of `signature` from `buf` (a whole body, aligned as if it started at 0). */
export const unmarshal = (signature: string, buf: Buffer): unknown[] => {
  const r = new Reader(buf, 0);
  return splitSignature(signature).map((t) => r.value(t));
};

export const marshal = (signature: string, values: readonly unknown[]): Buffer => {
  const w = new Writer();
  for (const [k, t] of splitSignature(signature).entries()) w.value(t, values[k]);
  return w.done();
};

export const MessageType = { call: 1, reply: 2, error: 3, signal: 4 } as const;
export const NO_REPLY_EXPECTED = 0x1;
export const NO_AUTO_START = 0x2;

export interface Message {
  type: number;
  flags: number;
  serial: number;
  path?: string;
  interface?: string;
  member?: string;
  errorName?: string;
  replySerial?: number;
  destination?: string;
  sender?: string;
  signature: string;
  body: unknown[];
}

const FIELDS: [keyof Message, number, string][] = [
  ['path', 1, 'o'],
  ['interface', 2, 's'],
  ['member', 3, 's'],
  ['errorName', 4, 's'],
  ['replySerial', 5, 'u'],
  ['destination', 6, 's'],
  ['sender', 7, 's'],
  ['signature', 8, 'g'],
];

export const encodeMessage = (m: Message): Buffer => {
  const body = m.signature ? marshal(m.signature, m.body) : Buffer.alloc(0);
  const fields = FIELDS.filter(([k]) => m[k] !== undefined && m[k] !== '').map(([k, code, sig]) => [
    code,
    new Variant(sig, m[k]),
  ]);
  const w = new Writer();
  w.value('(yyyyuu)', ['l'.charCodeAt(0), m.type, m.flags, 1, body.length, m.serial]);
  w.value('a(yv)', fields);
  w.align(8);
  w.bytes(body);
  return w.done();
};

/** One whole message from the front of `buf`, or null when more bytes are needed. */
export const decodeMessage = (buf: Buffer): { message: Message; size: number } | null => {
  if (buf.length < 16) return null;
  if (buf[0] !== 'l'.charCodeAt(0)) throw new Error('D-Bus: only little-endian peers are supported');
  const bodyLength = buf.readUInt32LE(4);
  const fieldsLength = buf.readUInt32LE(12);
  const headerEnd = 16 + fieldsLength + ((8 - (fieldsLength % 8)) % 8);
  const size = headerEnd + bodyLength;
  if (buf.length < size) return null;
  const r = new Reader(buf.subarray(0, headerEnd), 12);
  const fields = r.value('a(yv)') as [number, unknown][];
  const message: Message = {
    type: buf[1]!,
    flags: buf[2]!,
    serial: buf.readUInt32LE(8),
    signature: '',
    body: [],
  };
  const record = message as unknown as Record<string, unknown>;
  for (const [code, value] of fields) {
    const field = FIELDS.find(([, c]) => c === code);
    if (field) record[field[0]] = value;
  }
  if (message.signature) message.body = unmarshal(message.signature, buf.subarray(headerEnd, size));
  return { message, size };
};
