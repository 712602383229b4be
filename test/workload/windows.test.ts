import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { observe } from '../../src/platform/idle-delta.ts';
import {
  createWindowsIdleReader,
  MIN_INTERVAL_MS,
  parseFormatList,
  snapshotFromInstances,
} from '../../src/platform/windows/idle-counters.ts';
import { emulatorCommand } from '../support/commands.ts';

const dir = join(import.meta.dirname, '..', 'fixtures', 'wmi-processor');
const fixture = (name: string) => join(dir, name);

describe('Windows Processor Information counters (WMI, language-independent names)', () => {
  let tmp = '';
  before(async () => {
    // The emulators keep their state in %TMP%, which the command wrapper passes through.
    tmp = await mkdtemp(join(tmpdir(), 'powerplan-wmi-'));
    process.env.TMP = tmp;
  });
  after(() => rm(tmp, { recursive: true, force: true }));

  it('reads the Format-List layout of a real capture; the _Total sum is no processor', async () => {
    const [block] = parseFormatList(
      await readFile(fixture('en-US-ws2012-perfos-processor-formatted.txt'), 'utf8'),
    );
    assert.equal(block?.Name, '_Total');
    assert.equal(block?.C1TransitionsPersec, '15');
    assert.equal(block?.PercentC2Time, '75');
    assert.equal(block?.Caption, '');
    assert.equal(snapshotFromInstances([block!]).cpus.length, 0);
  });

  it('turns two raw reads into the observation: entries, time per state, busy share', async () => {
    const read = async (n: string) =>
      snapshotFromInstances(parseFormatList(await readFile(fixture(n), 'utf8')));
    const a = await read('raw-2cpu-a-DERIVED.txt');
    const b = await read('raw-2cpu-b-DERIVED.txt');
    assert.deepEqual(
      a.cpus.map((c) => c.cpu),
      [0, 1],
    );
    assert.equal(a.atS, 86_400);
    const o = observe(a, b, 'previous-read');
    assert.equal(o.source, 'windows-counters');
    assert.equal(o.windowSeconds, 10);
    assert.equal(o.busyShare, 0.4);
    assert.equal(o.idleEntriesPerSecond, (2 * 51_000) / 10);
    assert.deepEqual(
      o.states.map((s) => [s.name, s.entriesPerSecond, s.meanPeriodUs, Math.round(s.share * 1000) / 1000]),
      [
        ['C1', 10_000, 100, 0.833],
        ['C2', 200, 1000, 0.167],
        ['C3', 0, null, 0],
      ],
    );
  });

  it('through the PowerShell emulator: one program per read, reads closer than the interval share it, errors are os_error', async () => {
    const counters = join(tmp, 'powershell-emu-counters.json');
    const reader = createWindowsIdleReader({ powershell: emulatorCommand('powershell') });
    await assert.rejects(reader(), /Invalid class/);
    await writeFile(
      counters,
      JSON.stringify({
        files: [fixture('raw-2cpu-a-DERIVED.txt'), fixture('raw-2cpu-b-DERIVED.txt')],
        next: 0,
      }),
    );
    const first = await reader();
    const again = await reader();
    assert.equal(first, again, `a read within ${MIN_INTERVAL_MS} ms reuses the query`);
    assert.equal(JSON.parse(await readFile(counters, 'utf8')).next, 1, 'one PowerShell start');
    assert.equal(first.cpus.length, 2);
  });
});
