#!/usr/bin/env -S node --max-semi-space-size=1 --max-old-space-size=128 --no-memory-reducer --single-threaded
// The `powerplan` command. Runs the bundle in dist/ (built by `npm install` / `npm run build`, see
// scripts/build.mjs) while it is up to date, because compiling the TypeScript sources with tsx's
// loader costs most of a second at every start; runs the sources through tsx otherwise (no build,
// or a source file changed since the build). POWERPLAN_FROM_SOURCE=1 forces the sources.
// The #! line gives node the service's V8 flags (deploy/v8-flags.json): V8 sizes its heap at
// start, so they cannot be set from here (v8.setFlagsFromString changes no heap limit), and npm
// keeps them in the shims it writes on Windows (cmd-shim reads `env -S`).
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The bundle's URL when it was built after the last change of every source file that went in. */
const freshBundle = () => {
  if (process.env.POWERPLAN_FROM_SOURCE === '1') return null;
  try {
    const manifest = JSON.parse(readFileSync(join(root, 'dist', 'powerplan.meta.json'), 'utf8'));
    const entry = join(root, 'dist', manifest.entry);
    if (statSync(entry).mtimeMs < manifest.builtAt) return null;
    for (const input of manifest.inputs) {
      if (statSync(join(root, input)).mtimeMs >= manifest.builtAt) return null;
    }
    return pathToFileURL(entry).href;
  } catch {
    return null; // no build, or a file it was built from is gone
  }
};

const bundle = freshBundle();
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
