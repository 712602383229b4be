/**
 * Interactive API docs at /docs: Swagger UI over /openapi.json, fully offline. The page, its
 * start-up script and the swagger-ui-dist files are served by the app itself; the files come from a
 * fixed list of names, so no part of a request path ever reaches the filesystem. The start-up
 * script is a file rather than inline so that a strict Content-Security-Policy (script-src 'self')
 * does not break the page.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { swaggerUI } from '@hono/swagger-ui';
import { Hono } from 'hono';
import { PowerPlanError } from '../../domain/errors.ts';
import type { SubApp } from './env.ts';

export const DOCS_PATH = '/docs';
export const DOCS_ASSETS = '/docs/assets';

/** Where @hono/swagger-ui points its links when given `baseUrl: DOCS_ASSETS` and no version. */
const distPrefix = `${DOCS_ASSETS}/swagger-ui-dist`;
const initPath = `${DOCS_ASSETS}/init.js`;

/**
 * Where swagger-ui-dist is, resolved without loading it (its main module loads the 1.7 MB bundle),
 * on first use so that a build without it (a single executable shipped alone) still starts. In a
 * CommonJS bundle import.meta is empty: resolve next to the executable instead.
 */
let distDir: string | undefined;
const resolveDistDir = (): string => {
  const from = import.meta.url ?? pathToFileURL(process.execPath).href;
  distDir ??= dirname(createRequire(from).resolve('swagger-ui-dist/absolute-path.js'));
  return distDir;
};

/** The only files served, with their content types. */
const distFiles: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

// validatorUrl: null, or Swagger UI would send the document to validator.swagger.io.
const initScript = `window.addEventListener('load', () => {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
  });
});
`;

const loaded = new Map<string, Promise<Buffer>>();
const loadDistFile = (name: string): Promise<Buffer> => {
  let file = loaded.get(name);
  if (!file) {
    file = Promise.resolve()
      .then(() => readFile(join(resolveDistDir(), name)))
      .catch((e) => {
        throw new PowerPlanError(
          'not_found',
          'The API docs assets (the swagger-ui-dist package) are not installed with this service; GET /openapi.json serves the document itself.',
          undefined,
          { cause: e },
        );
      });
    file.catch(() => loaded.delete(name));
    loaded.set(name, file);
  }
  return file;
};

/** Swagger UI and its files; public like /openapi.json, as they show only the published contract. */
export const createDocs = (): SubApp => {
  const app = new Hono();
  app.get(
    DOCS_PATH,
    swaggerUI({
      url: '/openapi.json',
      baseUrl: DOCS_ASSETS,
      title: 'powerplan API',
      manuallySwaggerUIHtml: (asset) =>
        [
          '<div id="swagger-ui"></div>',
          ...asset.css.map((href) => `<link rel="stylesheet" href="${href}" />`),
          ...asset.js.map((src) => `<script src="${src}"></script>`),
          `<script src="${initPath}"></script>`,
        ].join('\n'),
    }),
  );
  app.get(initPath, (c) =>
    c.body(initScript, 200, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'no-cache',
    }),
  );
  app.get(`${distPrefix}/:file`, async (c) => {
    const name = c.req.param('file');
    const type = Object.hasOwn(distFiles, name) ? distFiles[name] : undefined;
    if (!type) return c.notFound();
    return c.body(new Uint8Array(await loadDistFile(name)), 200, {
      'content-type': type,
      'cache-control': 'public, max-age=3600',
    });
  });
  return { app, publicRoutes: [{ path: DOCS_PATH }, { prefix: `${DOCS_PATH}/` }] };
};
