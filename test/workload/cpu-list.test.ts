import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cpuRuns,
  formatCpuList,
  MAX_CPU,
  MAX_CPU_LIST_LENGTH,
  parseCpuList,
} from '../../src/domain/cpu-list.ts';

describe('CPU lists as Linux writes them', () => {
  it('reads single CPUs, ranges and their mix, ascending and each once', () => {
    assert.deepEqual(parseCpuList('0'), [0]);
    assert.deepEqual(parseCpuList('0-3'), [0, 1, 2, 3]);
    assert.deepEqual(parseCpuList('0-3,8,10-11'), [0, 1, 2, 3, 8, 10, 11]);
    assert.deepEqual(parseCpuList('5-5'), [5]);
    // Out of order and overlapping, as a person may write it.
    assert.deepEqual(parseCpuList('3,0-2'), [0, 1, 2, 3]);
    assert.deepEqual(parseCpuList('2-5,0-3,4'), [0, 1, 2, 3, 4, 5]);
    assert.equal(parseCpuList(`0-${MAX_CPU}`)?.length, MAX_CPU + 1);
  });

  it('writes the compact form, so a list asked for is echoed normalized', () => {
    assert.equal(formatCpuList(parseCpuList('3,0-2')!), '0-3');
    assert.equal(formatCpuList([11, 8, 0, 1, 2, 3, 10, 3]), '0-3,8,10-11');
    assert.equal(formatCpuList([7]), '7');
    assert.equal(formatCpuList([]), '');
    assert.deepEqual(cpuRuns([5, 0, 1, 2]), [
      [0, 2],
      [5, 5],
    ]);
  });

  it('refuses what is no CPU list: empty entries, spaces, signs, strides, a range backwards', () => {
    for (const bad of [
      '',
      ',',
      '0,',
      ',0',
      '0,,1',
      ' 0',
      '0 ',
      '0\n',
      '0 - 3',
      '-1',
      '+1',
      '1.5',
      '0x1',
      '3-1',
      '0-',
      '-3',
      '0-3-5',
      '0-7:2/4',
      'all',
      'cpu0',
      '１',
    ])
      assert.equal(parseCpuList(bad), null, JSON.stringify(bad));
  });

  it("refuses CPUs beyond the kernel's highest and lists too long to be one", () => {
    assert.equal(parseCpuList(String(MAX_CPU + 1)), null);
    assert.equal(parseCpuList(`0-${MAX_CPU + 1}`), null);
    assert.equal(parseCpuList('99999999999999999999'), null);
    assert.equal(parseCpuList('0'.repeat(6)), null);
    // Every second CPU of 256 fits; one character more than the limit does not, whatever it says.
    const evens = Array.from({ length: 128 }, (_, i) => 2 * i).join(',');
    assert.ok(evens.length <= MAX_CPU_LIST_LENGTH);
    assert.equal(parseCpuList(evens)?.length, 128);
    const long = `${'0,'.repeat(MAX_CPU_LIST_LENGTH / 2)}1`;
    assert.equal(long.length, MAX_CPU_LIST_LENGTH + 1);
    assert.equal(parseCpuList(long), null);
    assert.deepEqual(parseCpuList(long.slice(0, -2)), [0]);
  });
});
