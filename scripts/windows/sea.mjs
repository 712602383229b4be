// A Node single-executable application (SEA): a CommonJS script made into a blob by the same node
// binary it goes into (a Windows node.exe natively on Windows, under Wine elsewhere; a Linux node
// directly), then injected into a copy of that binary with postject. No code cache and no
// snapshot: the blob only depends on the script, so the same input gives the same bytes. The blob
// records the script's path as the SEA config names it (it shows in stack traces): node runs in the
// work folder with the relative name `powerplan.cjs`, so no build path goes into the executable.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'postject';
import { createPrefix } from './wine.mjs';

export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Runs the Windows node.exe with `args` (paths in them already in its form: see `toWindows`).
 * On Windows directly; elsewhere in a Wine prefix made for the call unless one is given.
 */
const windowsNode = (nodeExe, args, cwd, prefix) => {
  if (process.platform === 'win32' || !nodeExe.endsWith('.exe')) {
    execFileSync(nodeExe, args, { stdio: 'inherit', cwd });
    return;
  }
  const own = prefix ?? createPrefix('sea');
  try {
    const r = own.run(nodeExe, args, { cwd });
    if (r.status !== 0) throw new Error(`node.exe ${args.join(' ')}: exit ${r.status}\n${r.output}`);
  } finally {
    if (!prefix) own.close();
  }
};

/** Makes `out` running `mainScript` (CommonJS, self-contained) on `nodeExe` (node.exe or node). */
/** `execArgv`: the Node.js options the executable starts with (none for the test stand-ins). */
export const buildSea = async ({ nodeExe, mainScript, out, prefix, execArgv = [] }) => {
  const work = mkdtempSync(join(tmpdir(), 'powerplan-sea-'));
  try {
    const blob = join(work, 'sea.blob');
    copyFileSync(mainScript, join(work, 'powerplan.cjs'));
    writeFileSync(
      join(work, 'sea-config.json'),
      JSON.stringify({
        main: 'powerplan.cjs',
        output: 'sea.blob',
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: false,
        ...(execArgv.length ? { execArgv } : {}),
      }),
    );
    windowsNode(nodeExe, ['--experimental-sea-config', 'sea-config.json'], work, prefix);
    copyFileSync(nodeExe, out);
    chmodSync(out, 0o755);
    await inject(out, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};

/**
 * The bundle a single executable runs: deploy/sea/sea-main.ts with every package inside (it loads
 * no node_modules), CommonJS for the SEA loader. Returns the packages that went in (for licences).
 */
export const bundleSeaMain = async (root, outfile, target) => {
  const esbuild = await import('esbuild');
  const built = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['deploy/sea/sea-main.ts'],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target,
    outfile,
    metafile: true,
    legalComments: 'none',
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    logOverride: { 'empty-import-meta': 'silent' },
  });
  const packages = new Set(['node_modules/swagger-ui-dist']);
  for (const input of Object.keys(built.metafile.inputs)) {
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.replaceAll('\\', '/'));
    if (m) packages.add(m[1]);
  }
  return [...packages].sort();
};

/** Files a single executable reads beside itself: the status page and the /docs assets. */
export const seaAssets = (root) => [
  ...readdirSync(join(root, 'src/surfaces/http/page')).map((f) => [
    join(root, 'src/surfaces/http/page', f),
    `page/${f}`,
  ]),
  ...['absolute-path.js', 'package.json', 'swagger-ui.css', 'swagger-ui-bundle.js'].map((f) => [
    join(root, 'node_modules/swagger-ui-dist', f),
    `node_modules/swagger-ui-dist/${f}`,
  ]),
];

/** The licence text of every package in `packages` (directories relative to root). */
export const thirdPartyNotices = (root, packages, what) => {
  const notices = packages.map((dir) => {
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    const licenseFile = readdirSync(join(root, dir)).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = licenseFile
      ? readFileSync(join(root, dir, licenseFile), 'utf8').trim()
      : '(no licence file in the package)';
    return `${pkg.name} ${pkg.version} (${pkg.license ?? 'see below'})\n\n${text}\n`;
  });
  return `${what}\n\n${notices.join(`\n${'-'.repeat(72)}\n\n`)}`;
};
