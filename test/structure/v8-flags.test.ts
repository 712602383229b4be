/**
 * The same V8 flags wherever the service starts: the bin's #! line, `npm start`, the systemd
 * unit, the container, the Windows service and the single executable each carry exactly the flags
 * of deploy/v8-flags.json, and node takes them (the heap limit they set is in force).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../../scripts/lib/serve.mjs';
import { nodeOptionsFlags, startPoints, v8Flags } from '../../scripts/lib/start-points.mjs';

describe('V8 flags at every start point', () => {
  const flags = v8Flags();

  it('the source of truth names a young and an old generation size, no memory reducer, no helper threads', () => {
    assert.deepEqual(
      flags.map((f) => f.split('=')[0]),
      ['--max-semi-space-size', '--max-old-space-size', '--no-memory-reducer', '--single-threaded'],
    );
  });

  for (const point of startPoints()) {
    it(`${point.name} (${point.file}) carries exactly deploy/v8-flags.json's flags`, () => {
      assert.deepEqual(point.flags, point.expected, `${point.file}: ${JSON.stringify(point.flags)}`);
    });
  }

  it('NODE_OPTIONS carries all Node.js allows there: those it leaves out are refused by node', () => {
    const allowed = nodeOptionsFlags();
    const left = flags.filter((f) => !allowed.includes(f));
    assert.deepEqual(left, ['--no-memory-reducer', '--single-threaded']);
    const ok = spawnSync(process.execPath, ['-e', '0'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: allowed.join(' ') },
    });
    assert.equal(ok.status, 0, ok.stderr);
    for (const f of left) {
      const r = spawnSync(process.execPath, ['-e', '0'], {
        encoding: 'utf8',
        env: { ...process.env, NODE_OPTIONS: f },
      });
      assert.notEqual(r.status, 0, `${f} in NODE_OPTIONS`);
      assert.match(r.stderr, /not allowed in NODE_OPTIONS/);
    }
  });

  it('node takes them: the old generation limit is in force', () => {
    const r = spawnSync(process.execPath, [...flags, '-p', 'v8.getHeapStatistics().heap_size_limit'], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const old = Number(/--max-old-space-size=(\d+)/.exec(flags.join(' '))?.[1]);
    const limitMiB = Number(r.stdout) / 2 ** 20;
    assert.ok(limitMiB >= old && limitMiB < old + 32, `heap limit ${limitMiB} MiB for ${flags.join(' ')}`);
  });

  it('the bin runs through its #! line here (env -S)', () => {
    const r = spawnSync(join(repoRoot, 'bin', 'powerplan.js'), ['--version'], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.error ?? ''} ${r.stderr}`);
    assert.match(r.stdout, /\d+\.\d+\.\d+/);
  });
});
