import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  EVENTS_QUERY,
  groupCapabilities,
  parseEvents,
  windowsControl,
} from '../../src/platform/windows/events.ts';

const dir = join(import.meta.dirname, '..', 'fixtures', 'wevtutil');

describe('Kernel-Processor-Power event 26 (older Windows)', () => {
  it('is asked for, and a Hyper-V guest with 1 idle state and no performance states reads as the hypervisor deciding', async () => {
    assert.match(EVENTS_QUERY, /EventID=26/);
    const events = parseEvents(await readFile(join(dir, 'hyperv-event26-DERIVED.xml'), 'utf8'));
    assert.deepEqual(events[0]?.data, {
      Group: '0',
      Number: '0',
      IdleStateCount: '1',
      PerfStateCount: '0',
      ThrottleStateCount: '0',
    });
    const [g] = groupCapabilities(events);
    assert.equal(g?.event, 26);
    assert.equal(g?.idleStateCount, 1);
    assert.equal(g?.performanceImplementation, 0);
    const c = windowsControl(events, 'hyperv');
    assert.equal(c.decidedBy, 'hypervisor');
    assert.equal(c.clockControl, false);
    assert.equal(c.idleControl, false);
    assert.match(c.evidence[0]!.source, /^event 26 \(group 0\)$/);
  });

  it('event 55 wins over event 26 for the same group', async () => {
    const e26 = parseEvents(await readFile(join(dir, 'hyperv-event26-DERIVED.xml'), 'utf8'));
    const e55 = parseEvents(await readFile(join(dir, 'en-US-ws2012-eval-vm-event55-EXCERPT.txt'), 'utf8'));
    const [g] = groupCapabilities([...e26, ...e55]);
    assert.equal(g?.event, undefined);
    assert.equal(g?.processor, 7);
  });
});
