#!/usr/bin/env node
// Bundles src/main.ts with esbuild into dist/powerplan.mjs (plus chunks for what is loaded lazily),
// so that `powerplan` starts without compiling TypeScript at every start (tsx's loader costs most of
// a second). Run by `npm install` (the `prepare` script) and by `npm run build`.
//
// - Packages stay external: node_modules is loaded as installed, and a dynamic import (the MCP SDK,
//   the HTTP server with prom-client) stays a separate chunk that is only read when it is used.
// - Files read at runtime next to a source module (the status page) are found through the source
//   tree: `import.meta.dirname` of a source file becomes its directory under src/, computed from the
//   bundle's own location, so the bundle works wherever the package is installed.
// - dist/powerplan.meta.json lists the source files that went in; bin/powerplan.js uses the bundle
//   only while none of them is newer than the build, and runs the sources through tsx otherwise.
// Without esbuild (a production install without dev dependencies), the build is skipped and the
// command runs from source: a missing bundle is never an error.
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const outDir = join(root, 'dist');
const ENTRY = 'powerplan';
const CHUNK_PREFIX = 'powerplan-chunk-';
/**
 * Loaded from node_modules at runtime rather than bundled: what is imported lazily and large (the
 * MCP SDK, prom-client), what reads its own files (swagger-ui-dist, iconv-lite's tables), and tsx.
 */
const EXTERNAL = [
  '@modelcontextprotocol/*',
  'prom-client',
  'swagger-ui-dist',
  '@hono/swagger-ui',
  'iconv-lite',
  'tsx',
  'tsx/*',
];

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.warn('powerplan build: esbuild is not installed; the command will run from source (tsx).');
  process.exit(0);
}

const posix = (p) => p.split(sep).join('/');

/** `import.meta.dirname` of a source file, rewritten relative to the bundle in dist/. */
const sourceDirname = {
  name: 'source-dirname',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async (args) => {
      let contents = await readFile(args.path, 'utf8');
      if (contents.includes('import.meta.dirname')) {
        const fromDist = posix(relative(outDir, dirname(args.path)));
        contents = contents.replaceAll(
          'import.meta.dirname',
          `(import.meta.dirname && __powerplanJoin(import.meta.dirname, ${JSON.stringify(fromDist)}))`,
        );
        contents = `import { join as __powerplanJoin } from 'node:path';\n${contents}`;
      }
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * zod re-exports every locale (`z.locales`, about 40 languages) from its namespace object, which a
 * bundler cannot drop; the code uses none of them (zod's default English messages are imported
 * directly). An empty `locales` keeps a third of zod out of the start-up chunk.
 */
const noZodLocales = {
  name: 'no-zod-locales',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: 'zod-locales', namespace: 'empty' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

const startedAt = Date.now();
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { [ENTRY]: 'src/main.ts' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  outdir: outDir,
  outExtension: { '.js': '.mjs' },
  chunkNames: `${CHUNK_PREFIX}[hash]`,
  write: false,
  metafile: true,
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
  // Bundled CommonJS packages (yaml, under openapi3-ts) require Node built-ins: give them a require.
  banner: {
    js: "import { createRequire as __powerplanCreateRequire } from 'node:module'; const require = __powerplanCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  plugins: [sourceDirname, noZodLocales],
});

await mkdir(outDir, { recursive: true });
// Chunks first (new names), then the entry, then the manifest, each by rename: a command starting
// meanwhile sees either the old complete build or the new one.
const written = new Set();
const entryPath = join(outDir, `${ENTRY}.mjs`);
const ordered = [...result.outputFiles].sort((a, b) => (a.path === entryPath) - (b.path === entryPath));
for (const file of ordered) {
  const tmp = `${file.path}.${process.pid}.tmp`;
  await writeFile(tmp, file.contents);
  await rename(tmp, file.path);
  written.add(file.path);
}
const inputs = Object.keys(result.metafile.inputs)
  // Files only: not node_modules (rebuilt by npm install), not virtual modules (`empty:...`).
  .filter((p) => !p.includes('node_modules/') && !p.startsWith('<') && !/^[a-z-]+:/.test(p))
  .map((p) => posix(p))
  .sort();
// Whole seconds: an image layer (tar) keeps mtimes in seconds, so a bundle written in the second the
// build started would otherwise look older than its own build, and the command would fall back to
// the sources (and to tsx, which needs a writable /tmp: a read-only container would not start). A
// source changed in that second before the build counts as newer: the sources run, which is safe.
const manifest = { builtAt: Math.floor(startedAt / 1000) * 1000, entry: `${ENTRY}.mjs`, inputs };
const manifestPath = join(outDir, `${ENTRY}.meta.json`);
await writeFile(`${manifestPath}.${process.pid}.tmp`, `${JSON.stringify(manifest, null, 1)}\n`);
await rename(`${manifestPath}.${process.pid}.tmp`, manifestPath);
// Chunks of earlier builds.
for (const name of await readdir(outDir)) {
  const path = join(outDir, name);
  if (name.startsWith(CHUNK_PREFIX) && !written.has(path)) await rm(path, { force: true });
}
const bytes = result.outputFiles.reduce((s, f) => s + f.contents.length, 0);
console.log(
  `powerplan build: dist/${ENTRY}.mjs + ${written.size - 1} chunks, ${(bytes / 1024).toFixed(0)} KiB, ${inputs.length} source files, ${Date.now() - startedAt} ms`,
);
