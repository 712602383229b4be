/**
 * The Windows release as a Windows process (under Wine here): unpacked from
 * release/powerplan-<version>-win-x64.zip, powerplan.exe answers --version, `active` and `serve`
 * with /docs and its assets and the status page; `service install` and `service uninstall` drive
 * the service wrapper (a WinSW emulator in its place: WinSW is a .NET program and Wine has no
 * service control manager to show) and uninstall sets back the plan in force at install.
 *
 * Run by the Windows tier (`npm run test:windows`), which hands down WINEPREFIX,
 * POWERPLAN_TEST_STANDIN_EXE and POWERPLAN_TEST_RELEASE_ZIP.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, linkSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listeningUrl } from '../../scripts/lib/serve.mjs';
import { serviceExecArgv } from '../../scripts/lib/start-points.mjs';
import { linkStandins } from '../../scripts/windows/standins.mjs';
import { openPrefix, winPath } from '../../scripts/windows/wine.mjs';
import { ActivePlan, SystemInfo } from '../../src/domain/schemas.ts';
import { version } from '../../src/version.ts';
import { SCHEME, stockState } from '../emulators/win-emu-state.mjs';
import { until } from '../support/until.ts';

const standinExe = process.env.POWERPLAN_TEST_STANDIN_EXE;
const wineprefix = process.env.WINEPREFIX;
const zip = process.env.POWERPLAN_TEST_RELEASE_ZIP;
if (!standinExe || !wineprefix || !zip) {
  throw new Error(
    'run by npm run test:windows (needs WINEPREFIX, POWERPLAN_TEST_STANDIN_EXE, POWERPLAN_TEST_RELEASE_ZIP)',
  );
}

const work = mkdtempSync('/tmp/powerplan-windows-release-');
const wine = openPrefix(wineprefix, work);
const emuState = join(work, 'emu-state.json');
const winswState = join(work, 'winsw-state.json');
const standins = linkStandins(standinExe, join(work, 'standins'), {
  POWERPLAN_EMU_STATE: winPath(emuState),
  POWERPLAN_EMU_WINSW: winPath(winswState),
});
let dir = '';
let exe = '';
const stateDir = join(work, 'state');
const env = {
  POWERPLAN_STATE_DIR: winPath(stateDir),
  POWERPLAN_POWERCFG: standins.powercfg,
  POWERPLAN_REG: standins.reg,
  POWERPLAN_ICACLS: standins.icacls,
  POWERPLAN_POWERSHELL: standins.powershell,
  POWERPLAN_WEVTUTIL: standins.wevtutil,
  POWERPLAN_PORT: '0',
};
const emulated = () => JSON.parse(readFileSync(emuState, 'utf8')) as ReturnType<typeof stockState>;

let outputs = 0;
const run = async (args: string[]) => {
  const outFile = join(work, `out-${++outputs}.txt`);
  const child = wine.spawn(exe, args, { env, outFile });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output: readFileSync(outFile, 'utf8') };
};

describe('the Windows release, unpacked, as Windows processes', { concurrency: false }, () => {
  before(() => {
    writeFileSync(emuState, JSON.stringify(stockState('en-US', 437)));
    execFileSync('unzip', ['-q', zip, '-d', work]);
    dir = join(work, `powerplan-${version}-win-x64`);
    exe = join(dir, 'powerplan.exe');
    assert.ok(existsSync(exe), `${exe} in the zip`);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('holds powerplan.exe, the service wrapper with its config, the install script, the docs assets and the licences', () => {
    const listing = execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).split('\n');
    for (const f of [
      'powerplan.exe',
      'powerplan-service.exe',
      'powerplan-service.exe.config',
      'powerplan-service.xml',
      'install.ps1',
      'page/index.html',
      'node_modules/swagger-ui-dist/swagger-ui-bundle.js',
      'node_modules/swagger-ui-dist/swagger-ui.css',
      'LICENSE',
      'licenses/node.js.txt',
      'licenses/winsw.txt',
      'licenses/THIRD-PARTY-NOTICES.txt',
    ]) {
      assert.ok(listing.includes(`powerplan-${version}-win-x64/${f}`), f);
    }
  });

  it('powerplan.exe --version and active', async () => {
    const v = await run(['--version']);
    assert.equal(v.code, 0, v.output);
    assert.match(v.output, new RegExp(version.replaceAll('.', '\\.')));
    const a = await run(['active', '--json']);
    assert.equal(a.code, 0, a.output);
    assert.equal(ActivePlan.parse(JSON.parse(a.output)).plan?.id, SCHEME.balanced);
    // The executable starts with the service's V8 flags itself (sea-config.json's execArgv, one of
    // which Node refuses in NODE_OPTIONS), whoever starts it.
    const sys = await run(['system', '--json']);
    assert.equal(sys.code, 0, sys.output);
    assert.deepEqual(SystemInfo.parse(JSON.parse(sys.output)).service.execArgv, serviceExecArgv());
  });

  it('powerplan.exe serve answers /docs, its assets and the status page with 200', async () => {
    const outFile = join(work, 'serve.txt');
    writeFileSync(outFile, '');
    const child = wine.spawn(exe, ['serve'], { env, outFile });
    try {
      const url = await until(
        'powerplan.exe serve to listen',
        () => listeningUrl(readFileSync(outFile, 'utf8')),
        60_000,
        200,
      );
      const docs = await fetch(`${url}/docs`);
      assert.equal(docs.status, 200);
      const html = await docs.text();
      const assets = [...html.matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]!);
      assert.ok(assets.length >= 3, html);
      for (const a of assets) assert.equal((await fetch(`${url}${a}`)).status, 200, a);
      const page = await fetch(`${url}/`);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
      assert.equal((await fetch(`${url}/v1/plans/active`)).status, 200);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit').catch(() => {});
    }
  });

  it('service install registers and starts the wrapper; service uninstall stops and removes it and sets back the plan', async () => {
    // The emulator in the wrapper's place, with the stand-ins' standins.json and loader beside it.
    const wrapper = join(dir, 'powerplan-service.exe');
    unlinkSync(wrapper);
    linkSync(standinExe, wrapper);
    for (const f of ['standins.json', 'loader.cjs']) {
      writeFileSync(join(dir, f), readFileSync(join(work, 'standins', f)));
    }
    const installed = await run(['service', 'install']);
    assert.equal(installed.code, 0, installed.output);
    let winsw = JSON.parse(readFileSync(winswState, 'utf8'));
    assert.deepEqual(winsw.commands, ['install', 'start']);
    const xml = readFileSync(join(dir, 'powerplan-service.xml'), 'utf8');
    assert.match(xml, /<env name="POWERPLAN_HOST" value="127\.0\.0\.1" \/>/);
    assert.doesNotMatch(xml, /POWERPLAN_TOKEN_FILE/);
    assert.match(xml, /<executable>%BASE%\\powerplan\.exe<\/executable>/);

    const set = await run(['set', 'high-performance']);
    assert.equal(set.code, 0, set.output);
    assert.equal(emulated().active, SCHEME.highPerformance);

    const removed = await run(['service', 'uninstall']);
    assert.equal(removed.code, 0, removed.output);
    winsw = JSON.parse(readFileSync(winswState, 'utf8'));
    assert.deepEqual(winsw.commands, ['install', 'start', 'stop', 'uninstall']);
    assert.equal(winsw.installed, false);
    assert.equal(emulated().active, SCHEME.balanced, removed.output);
    assert.ok(!existsSync(join(stateDir, 'service.json')));
  });

  it('service install without the wrapper beside it says where to run it from (exit 1)', async () => {
    unlinkSync(join(dir, 'powerplan-service.exe'));
    const r = await run(['service', 'install']);
    assert.equal(r.code, 1, r.output);
    assert.match(r.output, /No service wrapper beside .*powerplan\.exe/);
  });
});
