/**
 * The status page at `/`: static HTML, CSS and ES modules from src/surfaces/http/page/, served by the app
 * itself (no CDN, works offline). Files come from a fixed list of names, so no part of a request
 * path reaches the filesystem. The page and its assets are public: they show nothing about the host
 * until the page's own API calls, which carry the token, answer.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type Context, Hono } from 'hono';
import type { Deps } from '../../deps.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import type { SubApp } from './env.ts';

export const PAGE_ASSETS = '/page';

/**
 * The only files served, with their content types: the page, its icon, its style sheets and its
 * modules, one per section.
 */
const js = 'text/javascript; charset=utf-8';
const css = 'text/css; charset=utf-8';
const assets: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  // The icon of the page and of /docs (so no browser asks for a missing /favicon.ico).
  'icon.svg': 'image/svg+xml',
  ...Object.fromEntries(['style.css', 'controls.css', 'sections.css'].map((name) => [name, css])),
  ...Object.fromEntries(
    [
      'app.js',
      'api.js',
      'dom.js',
      'errors.js',
      'confirm.js',
      'caller.js',
      'system.js',
      'active.js',
      'plans.js',
      'holds.js',
      'benchmark.js',
      'result.js',
      'chart.js',
      'advice.js',
      'workload.js',
      'history.js',
      'fleet.js',
    ].map((name) => [name, js]),
  ),
};

/**
 * Next to this module when run from source; next to the executable in a CommonJS bundle (a single
 * executable), where import.meta is empty.
 */
const pageDir = (): string =>
  import.meta.dirname ? join(import.meta.dirname, 'page') : join(dirname(process.execPath), 'page');

const cache = new Map<string, Promise<Buffer>>();
const load = (name: string): Promise<Buffer> => {
  let file = cache.get(name);
  if (!file) {
    file = readFile(join(pageDir(), name)).catch((e) => {
      cache.delete(name);
      throw new PowerPlanError(
        'not_found',
        'The status page files are not installed with this service (a page/ folder next to it); the API itself works.',
        undefined,
        { cause: e },
      );
    });
    cache.set(name, file);
  }
  return file;
};

/**
 * A policy for the page alone: everything from this origin only, no inline script or style. It is
 * set here, so it must carry frame-ancestors itself (the security headers keep a handler's policy).
 */
const pagePolicy = (frameAncestors: string): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors}`,
  ].join('; ');

/** The page and its files; all public, as they show nothing until the page's API calls answer. */
export const createPage = (deps: Pick<Deps, 'config'>): SubApp => {
  const app = new Hono();
  // Checked at start-up by the HTTP security settings; an app built without them gets 'self'.
  const ancestors = deps.config.frameAncestors;
  const policy = pagePolicy(/^[\w'*.:/ -]+$/.test(ancestors) ? ancestors : "'self'");
  const send = async (c: Context, name: string, body?: string) => {
    const type = assets[name]!;
    return c.body(body ?? new Uint8Array(await load(name)), 200, {
      'content-type': type,
      'cache-control': 'no-cache',
      ...(name === 'index.html' ? { 'content-security-policy': policy } : {}),
    });
  };
  app.get('/', async (c) => {
    // Embedded in a portal: no header or footer, decided here so the chrome never flashes.
    if (c.req.query('embed') !== '1') return send(c, 'index.html');
    const html = (await load('index.html'))
      .toString('utf8')
      .replace('<html lang="en">', '<html lang="en" class="embed">');
    return send(c, 'index.html', html);
  });
  // What a browser asks for a page that names no icon (/docs, a JSON answer opened in a tab).
  app.get('/favicon.ico', (c) => send(c, 'icon.svg'));
  app.get(`${PAGE_ASSETS}/:file`, async (c) => {
    const name = c.req.param('file');
    if (!Object.hasOwn(assets, name) || name === 'index.html') return c.notFound();
    return send(c, name);
  });
  return { app, publicRoutes: [{ path: '/' }, { path: '/favicon.ico' }, { prefix: `${PAGE_ASSETS}/` }] };
};
