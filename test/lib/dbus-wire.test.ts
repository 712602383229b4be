import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  decodeMessage,
  encodeMessage,
  MessageType,
  marshal,
  splitSignature,
  unmarshal,
  Variant,
} from '../../src/lib/dbus-wire.ts';

describe('D-Bus wire format', () => {
  it('splits signatures into complete types and rejects broken ones', () => {
    assert.deepEqual(splitSignature('sa{sv}as'), ['s', 'a{sv}', 'as']);
    assert.deepEqual(splitSignature('(yyyyuu)a(yv)'), ['(yyyyuu)', 'a(yv)']);
    assert.throws(() => splitSignature('a{sv'), /unclosed/);
    assert.throws(() => splitSignature('sz'), /bad type/);
  });

  it('lays out bytes as the specification does (padding, array length without the padding)', () => {
    // u32 1, then an array of int64: length 8 at offset 4, padding to 8, element at 8.
    const b = marshal('uax', [1, [2n]]);
    assert.equal(b.toString('hex'), ['01000000', '08000000', '0200000000000000'].join(''));
    assert.equal(marshal('s', ['ab']).toString('hex'), '020000006162' + '00');
    assert.equal(marshal('g', ['s']).toString('hex'), '017300');
  });

  it('round-trips strings, numbers, arrays, structs and dicts of variants', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.array(fc.dictionary(fc.string({ minLength: 1 }), fc.string())),
        fc.boolean(),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        (s, i, dicts, b, t) => {
          const body = [
            s,
            i,
            dicts.map((d) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, new Variant('s', v)]))),
            [b, t],
          ];
          const back = unmarshal('siaa{sv}(bt)', marshal('siaa{sv}(bt)', body));
          assert.deepEqual(back, [s, i, dicts.map((d) => ({ ...d })), [b, t]]);
        },
      ),
    );
  });

  it('encodes and decodes whole messages, and waits for the rest of a partial one', () => {
    const bytes = encodeMessage({
      type: MessageType.signal,
      flags: 0,
      serial: 7,
      path: '/net/hadess/PowerProfiles',
      interface: 'org.freedesktop.DBus.Properties',
      member: 'PropertiesChanged',
      signature: 'sa{sv}as',
      body: ['net.hadess.PowerProfiles', { ActiveProfile: new Variant('s', 'performance') }, []],
    });
    assert.equal(decodeMessage(bytes.subarray(0, bytes.length - 1)), null);
    const got = decodeMessage(Buffer.concat([bytes, Buffer.from('extra')]));
    assert.equal(got?.size, bytes.length);
    assert.equal(got?.message.serial, 7);
    assert.equal(got?.message.member, 'PropertiesChanged');
    assert.deepEqual(got?.message.body, ['net.hadess.PowerProfiles', { ActiveProfile: 'performance' }, []]);
    assert.throws(() => decodeMessage(Buffer.from('B'.repeat(16))), /little-endian/);
  });
});
