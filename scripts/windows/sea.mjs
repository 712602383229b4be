// A Node single-executable application (SEA) for Windows: a CommonJS script made into a blob by the
// same Windows node.exe it goes into (run natively on Windows, under Wine elsewhere), then injected
// into a copy of that node.exe with postject. No code cache and no snapshot: the blob only depends
// on the script, so the same input gives the same bytes.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'postject';
import { createPrefix, winPath } from './wine.mjs';

export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Runs the Windows node.exe with `args` (paths in them already in its form: see `toWindows`).
 * On Windows directly; elsewhere in a Wine prefix made for the call unless one is given.
 */
const windowsNode = (nodeExe, args, prefix) => {
  if (process.platform === 'win32') {
    execFileSync(nodeExe, args, { stdio: 'inherit' });
    return;
  }
  const own = prefix ?? createPrefix('sea');
  try {
    const r = own.run(nodeExe, args);
    if (r.status !== 0) throw new Error(`node.exe ${args.join(' ')}: exit ${r.status}\n${r.output}`);
  } finally {
    if (!prefix) own.close();
  }
};

const toWindows = (p) => (process.platform === 'win32' ? p : winPath(p));

/** Makes `out` (an .exe) running `mainScript` (CommonJS, self-contained) on `nodeExe`. */
export const buildSea = async ({ nodeExe, mainScript, out, prefix }) => {
  const work = mkdtempSync(join(tmpdir(), 'powerplan-sea-'));
  try {
    const blob = join(work, 'sea.blob');
    const config = join(work, 'sea-config.json');
    writeFileSync(
      config,
      JSON.stringify({
        main: toWindows(mainScript),
        output: toWindows(blob),
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: false,
      }),
    );
    windowsNode(nodeExe, ['--experimental-sea-config', toWindows(config)], prefix);
    copyFileSync(nodeExe, out);
    await inject(out, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};
