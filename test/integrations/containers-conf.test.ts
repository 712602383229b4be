/**
 * The engine settings npm run test:container needs (scripts/container/base-image.mjs): written
 * into a containers.conf that is absent, added to one that lacks them under their own section
 * (never a second table of the same name), a key the administrator set left as it is, and a file
 * that has them all left untouched; each time it says what it did.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
// @ts-expect-error: a build script in plain JavaScript, without types
import { ensureContainersConf } from '../../scripts/container/base-image.mjs';

const ensure = ensureContainersConf as (file: string, log: (line: string) => void) => boolean;

/** TOML tables as this test needs them: `[name]` headers and `key = value` lines, value as JSON/YAML. */
const tables = (text: string) => {
  const out: Record<string, Record<string, unknown>> = {};
  let table = '';
  for (const line of text.split('\n')) {
    const header = /^\s*\[([\w.]+)\]\s*$/.exec(line);
    if (header) {
      assert.ok(!(header[1]! in out), `table [${header[1]}] appears once`);
      table = header[1]!;
      out[table] = {};
      continue;
    }
    const kv = /^\s*(\w+)\s*=\s*(.+)$/.exec(line);
    if (kv) out[table]![kv[1]!] = parse(kv[2]!);
  }
  return out;
};

describe('containers.conf for podman on the build machines', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-conf-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('writes the four settings into an absent file, then leaves the file alone', async () => {
    const file = join(dir, 'absent.conf');
    const said: string[] = [];
    assert.equal(
      ensure(file, (l) => said.push(l)),
      true,
    );
    assert.deepEqual(tables(await readFile(file, 'utf8')), {
      engine: { runtime: 'runc', cgroup_manager: 'cgroupfs', events_logger: 'file' },
      containers: { default_ulimits: ['nofile=20000:20000', 'nproc=32768:32768'] },
    });
    assert.match(
      said[0]!,
      /written engine\.runtime, engine\.cgroup_manager, engine\.events_logger, containers\.default_ulimits/,
    );
    const before = await readFile(file, 'utf8');
    assert.equal(
      ensure(file, (l) => said.push(l)),
      false,
    );
    assert.equal(await readFile(file, 'utf8'), before);
    assert.match(said[1]!, /left as it is/);
  });

  it("adds only the missing keys under the file's own sections and keeps the administrator's", async () => {
    const file = join(dir, 'partial.conf');
    await writeFile(
      file,
      '[engine]\nruntime = "crun"\nnum_locks = 4096\n\n[network]\nnetwork_backend = "cni"\n',
    );
    const said: string[] = [];
    assert.equal(
      ensure(file, (l) => said.push(l)),
      true,
    );
    const t = tables(await readFile(file, 'utf8'));
    assert.deepEqual(t.engine, {
      runtime: 'crun',
      num_locks: 4096,
      cgroup_manager: 'cgroupfs',
      events_logger: 'file',
    });
    assert.deepEqual(t.network, { network_backend: 'cni' });
    assert.deepEqual(t.containers, { default_ulimits: ['nofile=20000:20000', 'nproc=32768:32768'] });
    assert.match(
      said[0]!,
      /added engine\.cgroup_manager, engine\.events_logger, containers\.default_ulimits$/,
    );
  });
});
