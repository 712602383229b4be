/**
 * Public routes: the static, data-free routes that answer GET/HEAD without a token and whatever
 * the Host (liveness, the API contract, the page's and the docs' files). The app collects them from
 * the modules that serve them and hands the matcher to the auth middleware and the guard.
 */
import type { PublicRoute } from './env.ts';

const PREFIX = /^\/[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*\/$/;

/** Dot segments, doubled or encoded slashes and backslashes never count as public. */
const suspicious = (path: string) => /(^|\/)\.\.?(\/|$)|\/\/|\\|%2e|%2f|%5c/i.test(path);

export type PublicMatcher = (method: string, path: string) => boolean;

export const publicMatcher = (routes: readonly PublicRoute[]): PublicMatcher => {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const r of routes) {
    if ('path' in r) exact.add(r.path);
    else if (PREFIX.test(r.prefix)) prefixes.push(r.prefix);
    else throw new Error(`A public prefix must look like /name/ (got ${r.prefix})`);
  }
  return (method, path) =>
    (method === 'GET' || method === 'HEAD') &&
    (exact.has(path) || prefixes.some((p) => path.startsWith(p) && !suspicious(path)));
};
