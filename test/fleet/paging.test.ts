/**
 * Fleet answers an assistant can hold, at 10,000 hosts: a real Prometheus loaded with the
 * simulated fleet (perf/lib/fleet-sim.ts), and get_fleet_status / list_fleet_hosts over MCP, REST
 * and the CLI. Every MCP result stays under 100 KB; the counts are the whole fleet's, checked
 * against the simulation; the pages, followed by their cursors, list every host exactly once, the
 * failures first; the filters narrow the page and not the counts; a cursor is refused with other
 * filters.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createBlocks, simHost, writeOpenMetrics } from '../../perf/lib/fleet-sim.ts';
import { FleetHostList, FleetStatus } from '../../src/domain/fleet.ts';
import { createApp } from '../../src/surfaces/http/app.ts';
import { type TestDeps, testDeps } from '../support/deps.ts';
import { withMcpClient } from '../support/mcp.ts';
import { runCli } from '../support/processes.ts';
import { hasPrometheus, type RunningPrometheus, startPrometheus } from '../support/prometheus.ts';
import { writeSecret } from './rig.ts';

const COUNT = 10_000;
const MCP_LIMIT = 100 * 1024;
const sim = Array.from({ length: COUNT }, (_, i) => simHost(i));
const ok = sim.filter((h) => h.state === 'ok');

describe('fleet answers at 10,000 hosts, a page at a time', {
  skip: !hasPrometheus && 'no Prometheus',
}, () => {
  let dir: string;
  let prometheus: RunningPrometheus;
  let fleetFile: string;
  let t: TestDeps;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'powerplan-paging-'));
    await writeOpenMetrics(join(dir, 'fleet.om'), COUNT, Math.floor(Date.now() / 1000) - 10);
    await createBlocks(join(dir, 'fleet.om'), join(dir, 'data'));
    await rm(join(dir, 'fleet.om'));
    prometheus = await startPrometheus(dir, 'global: {}\n', { dataDir: join(dir, 'data') });
    fleetFile = join(dir, 'fleet.json');
    await writeSecret(fleetFile, JSON.stringify({ prometheus: { url: prometheus.url } }));
    t = await testDeps({ POWERPLAN_FLEET_FILE: fleetFile, POWERPLAN_FLEET_TIMEOUT_MS: '60000' });
  });
  after(async () => {
    await t?.cleanup();
    await prometheus?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** One MCP call: its structured answer, and the size of the whole result as a client receives it. */
  const mcp = (name: string, args: Record<string, unknown>) =>
    withMcpClient(t.deps, async (client) => {
      const r = await client.callTool({ name, arguments: args });
      return { r, bytes: Buffer.byteLength(JSON.stringify(r)) };
    });

  it('MCP: the whole fleet counted, the failures first, under 100 KB a page; the cursors reach every host once', async () => {
    const first = await mcp('get_fleet_status', {});
    assert.notEqual(first.r.isError, true, JSON.stringify(first.r.content).slice(0, 500));
    assert.ok(first.bytes < MCP_LIMIT, `the first page is ${first.bytes} bytes`);
    const s = FleetStatus.parse(first.r.structuredContent);
    const kinds = (kind: string) => ok.filter((h) => h.plan.kind === kind).length;
    assert.equal(s.summary.total, COUNT);
    assert.equal(s.summary.ok, ok.length);
    assert.equal(s.summary.unreachable, COUNT - ok.length);
    assert.deepEqual(s.summary.byKind, {
      balanced: kinds('balanced'),
      'high-performance': kinds('high-performance'),
      'power-saver': kinds('power-saver'),
    });
    // The simulation advises every host not on high performance to switch.
    assert.deepEqual(s.summary.byAdvice, {
      keep: kinds('high-performance'),
      switch: ok.length - kinds('high-performance'),
      none: 0,
    });
    // Every fifth host has a desired plan: drift on every tenth, in force on the others.
    const desired = (rest: number) => sim.filter((h, i) => h.state === 'ok' && i % 10 === rest).length;
    assert.deepEqual(s.summary.byDrift, { drift: desired(0), 'in-desired-state': desired(5) });
    assert.equal(s.matched, COUNT);
    assert.equal(s.hosts.length, 25, 'the default page');
    assert.ok(
      s.hosts.every((h) => h.status === 'unreachable'),
      'the failures lead',
    );

    const seen = new Set<string>();
    const statuses: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await mcp('get_fleet_status', { limit: 200, ...(cursor ? { cursor } : {}) });
      assert.ok(page.bytes < MCP_LIMIT, `page ${pages} is ${page.bytes} bytes`);
      const p = FleetStatus.parse(page.r.structuredContent);
      for (const h of p.hosts) {
        assert.ok(!seen.has(h.name), `${h.name} listed twice`);
        seen.add(h.name);
        statuses.push(
          h.status === 'ok' ? (h.recommendation?.changeRecommended ? 'switch' : 'keep') : 'failed',
        );
      }
      cursor = p.nextCursor;
      pages++;
    } while (cursor);
    assert.equal(seen.size, COUNT);
    // The order: every failure, then every host advised to switch, then the rest.
    const order = statuses.filter((x, i) => x !== statuses[i - 1]);
    assert.deepEqual(order, ['failed', 'switch', 'keep']);
    assert.ok(pages > COUNT / 200, `${pages} pages: each ends at about 40 KB`);
  });

  it('filters narrow the page, not the counts; a cursor is refused with other filters', async () => {
    const down = FleetStatus.parse(
      (await mcp('get_fleet_status', { status: ['unreachable'], limit: 5 })).r.structuredContent,
    );
    assert.equal(down.matched, COUNT - ok.length);
    assert.equal(down.summary.total, COUNT);
    const saver = FleetStatus.parse(
      (await mcp('get_fleet_status', { kind: ['power-saver'], switchRecommended: true })).r.structuredContent,
    );
    assert.equal(saver.matched, ok.filter((h) => h.plan.kind === 'power-saver').length);
    assert.ok(saver.hosts.every((h) => h.plan?.kind === 'power-saver'));
    const sql = FleetStatus.parse((await mcp('get_fleet_status', { tags: ['prod'] })).r.structuredContent);
    assert.equal(sql.summary.total, sim.filter((h) => h.tags.includes('prod')).length);
    const wrong = await mcp('get_fleet_status', { status: ['ok'], cursor: down.nextCursor });
    assert.equal(wrong.r.isError, true);
    assert.match(JSON.stringify(wrong.r.content), /cursor: it was made for other filters/);
  });

  it('list_fleet_hosts pages too, in name order (a fleet file of 10,000 hosts)', async () => {
    const file = join(dir, 'hosts.json');
    await writeSecret(
      file,
      JSON.stringify({
        hosts: [...sim]
          .reverse()
          .map((h) => ({ name: h.name, url: `http://${h.name}.example.com:8750`, tags: h.tags })),
      }),
    );
    const hosts = await testDeps({ POWERPLAN_FLEET_FILE: file });
    const first = await withMcpClient(hosts.deps, async (client) => {
      const r = await client.callTool({ name: 'list_fleet_hosts', arguments: {} });
      return { r, bytes: Buffer.byteLength(JSON.stringify(r)) };
    }).finally(() => hosts.cleanup());
    assert.ok(first.bytes < MCP_LIMIT, `${first.bytes} bytes`);
    const l = FleetHostList.parse(first.r.structuredContent);
    assert.equal(l.matched, COUNT);
    assert.equal(l.hosts[0]?.name, 'db00000');
    assert.deepEqual(
      l.hosts.map((h) => h.name),
      [...l.hosts.map((h) => h.name)].sort(),
    );
    assert.ok(l.nextCursor);
  });

  it('REST pages with limit and cursor; a bad cursor is a 400', async () => {
    const app = createApp(t.deps);
    const get = async (q: string) => {
      const res = await app.request(`/v1/fleet/status${q}`);
      return { status: res.status, body: await res.json() };
    };
    const a = FleetStatus.parse((await get('?limit=50&status=ok')).body);
    assert.equal(a.hosts.length, 50);
    assert.equal(a.matched, ok.length);
    const b = FleetStatus.parse((await get(`?limit=50&status=ok&cursor=${a.nextCursor}`)).body);
    assert.equal(b.hosts.length, 50);
    assert.equal(new Set([...a.hosts, ...b.hosts].map((h) => h.name)).size, 100, 'no host on both pages');
    const bad = await get('?cursor=bm90LWEtY3Vyc29y');
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /cursor: not a cursor/);
  });

  it('CLI: the counts and a table of one page; --all lists every host', async () => {
    const env = { POWERPLAN_BACKEND: 'simulated', POWERPLAN_STATE_DIR: join(dir, 'cli') };
    const page = await runCli(['fleet', 'status', '--fleet', fleetFile, '--limit', '10'], env);
    assert.equal(page.code, 0, page.stderr);
    assert.match(
      page.stdout,
      new RegExp(`${COUNT} hosts: ${ok.length} ok, ${COUNT - ok.length} unreachable`),
    );
    const kinds = ['balanced', 'high-performance', 'power-saver'].map(
      (k) => `${ok.filter((h) => h.plan.kind === k).length} ${k}`,
    );
    assert.match(page.stdout, new RegExp(`Plans: ${kinds.join(', ')}\\.`));
    assert.match(page.stdout, /Shown 10 of 10000: --all for every page, or --cursor \S+ for the next\./);
    assert.equal(page.stdout.split('\n').filter((l) => /^db\d{5}\s/.test(l)).length, 10);
    const all = await runCli(['fleet', 'status', '--fleet', fleetFile, '--all', '--json'], env);
    assert.equal(all.code, 0, all.stderr);
    const s = FleetStatus.parse(JSON.parse(all.stdout));
    assert.equal(s.hosts.length, COUNT);
    assert.equal(new Set(s.hosts.map((h) => h.name)).size, COUNT);
    assert.equal(s.nextCursor, null);
  });
});
