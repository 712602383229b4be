#!/usr/bin/env node
// `npm run check:reproducible`: the release artefacts are the same bytes whichever folder they are
// built in. Clones this checkout's commit into a second folder (another path, another length),
// installs the same locked packages there (npm ci), builds the zip (package:windows) and the .deb
// (package:deb) there, and compares their SHA-256 with the ones already built here in release/
// (build them first). The checkout must be clean: the clone has only what is committed.
// Exit 1 on any difference, naming the artefact and both hashes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sha256 } from './windows/toolchain.mjs';

const root = resolve(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const artefacts = [`release/powerplan-${version}-win-x64.zip`, `release/powerplan_${version}_amd64.deb`];
const scripts = ['package:windows', 'package:deb'];

const fail = (message) => {
  console.error(`check:reproducible: ${message}`);
  process.exit(1);
};
const missing = artefacts.filter((a) => !existsSync(join(root, a)));
if (missing.length)
  fail(`${missing.join(', ')} not built here; run ${scripts.map((s) => `npm run ${s}`).join(' and ')} first`);
const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
  cwd: root,
  encoding: 'utf8',
});
if (dirty.trim()) fail(`the checkout has uncommitted changes, which a clone would not have:\n${dirty}`);

const work = mkdtempSync(join(tmpdir(), 'powerplan-reproducible-'));
const clone = join(work, 'a-second-clone-in-another-folder');
try {
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', root, clone], { stdio: 'inherit' });
  const run = (args) => execFileSync('npm', args, { cwd: clone, stdio: ['ignore', 'inherit', 'inherit'] });
  run(['ci', '--no-audit', '--no-fund', '--prefer-offline']);
  for (const s of scripts) run(['run', '-s', s]);
  const differ = [];
  for (const a of artefacts) {
    const here = sha256(join(root, a));
    const there = sha256(join(clone, a));
    console.log(`${a}: ${here} in ${root}, ${there} in ${clone}`);
    if (here !== there) differ.push(a);
  }
  if (differ.length) fail(`built in two folders, ${differ.join(' and ')} differ`);
  console.log('reproducible: the same zip and .deb from two folders');
} finally {
  rmSync(work, { recursive: true, force: true });
}
