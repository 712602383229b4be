/**
 * State files: absent is not damaged. Each state file appended with a stray byte, truncated or
 * emptied is kept aside as `<name>.corrupt-<UTC time>` with exactly the damaged bytes, an error
 * line names it, /healthz answers 200 with `degraded` naming it, a metric counts it, a damaged
 * journal is warned about on get_active_power_plan, and nothing overwrites the kept copy.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { appendFile, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { buildDeps, type Deps } from '../../src/deps.ts';
import { createLogger } from '../../src/lib/log.ts';
import { createToken, readTokenFile } from '../../src/lib/tokens.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { call } from '../support/call.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';

interface Case {
  file: string;
  journal: boolean;
  /** Writes a valid file the way the service does. */
  make: (t: TestDeps) => Promise<void>;
  /** What reads the file next (a request, a timer, the next start). */
  read: (deps: Deps, t: TestDeps) => Promise<unknown>;
}

const cases: Case[] = [
  {
    file: 'restore-journal.json',
    journal: true,
    make: async (t) => {
      await call(t.deps, 'hold_power_plan', { plan: 'high-performance', for: '10m' });
    },
    read: (deps) => deps.holds.list(),
  },
  {
    file: 'holds.json',
    journal: true,
    make: (t) =>
      t.deps.store.write('holds.json', { version: 1, restorePlanId: 'x', restorePlanName: 'X', holds: [] }),
    read: (deps) => deps.planChange.journal(),
  },
  {
    file: 'benchmarks.json',
    journal: false,
    make: (t) => t.deps.store.write('benchmarks.json', { version: 1, results: [] }),
    read: (deps) => deps.bench.list(1),
  },
  {
    file: 'desired.json',
    journal: false,
    make: async (t) => {
      await call(t.deps, 'set_desired_power_plan', { plan: 'balanced' });
    },
    read: (deps) => deps.desired.state(),
  },
  {
    file: 'simulated-backend.json',
    journal: false,
    make: (t) => t.deps.backend.setActive('8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c'),
    read: (deps) => deps.backend.getActive(),
  },
  {
    file: 'tokens.json',
    journal: false,
    make: async (t) => {
      await createToken(join(t.dir, 'tokens.json'), 'ops', ['read']);
    },
    read: (_deps, t) => readTokenFile(join(t.dir, 'tokens.json')).catch((e: Error) => e),
  },
];

const damages: [string, (path: string) => Promise<void>][] = [
  ['a stray byte appended', (p) => appendFile(p, 'x')],
  ['truncated', async (p) => truncate(p, Math.floor((await readFile(p)).length / 2))],
  ['emptied', (p) => truncate(p, 0)],
];

let t: TestDeps | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const kept = (dir: string, file: string) =>
  readdirSync(dir).filter(
    (f) => f.startsWith(`${file}.corrupt-`) && /\.corrupt-\d{8}T\d{9}Z(-\d+)?$/.test(f),
  );

describe('a damaged state file is kept aside, logged and reported, never overwritten', () => {
  for (const c of cases) {
    for (const [how, damage] of damages) {
      it(`${c.file}, ${how}`, async () => {
        t = await testDeps({ POWERPLAN_TOKEN_FILE: 'tokens.json' });
        await c.make(t);
        const path = join(t.dir, c.file);
        await damage(path);
        const damaged = await readFile(path);
        // The next start, with its log captured.
        const lines: string[] = [];
        const config = { ...loadConfig(t.env), tokenFile: join(t.dir, 'tokens.json') };
        const deps = buildDeps(config, { log: createLogger('error', (l) => lines.push(l)) });
        try {
          await c.read(deps, t);
          const copies = kept(t.dir, c.file);
          assert.equal(copies.length, 1, `one kept copy of ${c.file}: ${readdirSync(t.dir).join(', ')}`);
          assert.deepEqual(
            await readFile(join(t.dir, copies[0]!)),
            damaged,
            'the kept copy holds the damaged bytes',
          );
          if (c.file !== 'tokens.json') {
            assert.ok(
              lines.some((l) => JSON.parse(l).level === 'error' && l.includes(copies[0]!)),
              `an error line names the kept copy: ${lines.join('')}`,
            );
            assert.equal(deps.store.keptAsideTotal, 1);
          }
          const health = await createApp(deps).request('/healthz');
          assert.equal(health.status, 200);
          const body = (await health.json()) as {
            status: string;
            damaged: { file: string; keptAs: string; journal: boolean }[];
          };
          assert.equal(body.status, 'degraded');
          assert.deepEqual(
            body.damaged.map((d) => [d.file, d.keptAs, d.journal]),
            [[c.file, copies[0], c.journal]],
          );
          const metrics = await (await createApp(deps).request('/metrics')).text();
          assert.match(
            metrics,
            new RegExp(`powerplan_state_files_damaged\\{file="${c.file.replace('.', '\\.')}"\\} 1`),
          );
          const active = await call<{ warnings?: string[] }>(deps, 'get_active_power_plan');
          assert.equal(
            (active.warnings ?? []).some((w) => w.includes(copies[0]!) && /restore may be pending/.test(w)),
            c.journal,
          );
          // Writing the file anew (or damaging it again) never touches the kept copy.
          await writeFile(path, '{');
          await c.read(deps, t);
          assert.deepEqual(await readFile(join(t.dir, copies[0]!)), damaged);
          assert.equal(kept(t.dir, c.file).length, 2, 'a second damage gets a kept copy of its own');
        } finally {
          deps.shutdown.abort();
        }
      });
    }
  }

  it('an absent file is not damaged', async () => {
    t = await testDeps();
    for (const c of cases.filter((x) => x.file !== 'tokens.json')) await c.read(t.deps, t);
    assert.equal(readdirSync(t.dir).filter((f) => f.includes('.corrupt-')).length, 0);
    const body = (await (await createApp(t.deps).request('/healthz')).json()) as { status: string };
    assert.equal(body.status, 'ok');
  });
});
