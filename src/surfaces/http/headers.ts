/**
 * Security headers on every response: the same set Hono's secureHeaders sends by default, with
 * frame-ancestors from POWERPLAN_FRAME_ANCESTORS and HSTS under TLS. A JSON answer made by
 * jsonResponse (the reads, /healthz) carries them in the plain header object it is made with,
 * which the Node adapter passes to `writeHead` as it is. Any other response gets them once the
 * route has answered: set on the Node response, which the adapter writes only after the whole
 * chain has run; touching the WHATWG `Response` headers instead would make the adapter build a
 * full `Headers`/`Response` pair for every request (about 30 µs, docs/PERFORMANCE.md). A route
 * that sets one of these headers itself (the page's fuller Content-Security-Policy) wins, as Node
 * gives writeHead's headers precedence.
 */
import type { MiddlewareHandler } from 'hono';
import { type AppEnv, nodeOf } from './env.ts';

export interface HeaderSettings {
  /** frame-ancestors sources, checked at start-up: `'none'`, `'self'` or origins. */
  frameAncestors: string[];
  https: boolean;
}

export const securityHeaderList = ({ frameAncestors, https }: HeaderSettings): [string, string][] => {
  const onlySelf = frameAncestors.length === 1 && frameAncestors[0] === "'self'";
  const none = frameAncestors.length === 1 && frameAncestors[0] === "'none'";
  return [
    ['content-security-policy', `frame-ancestors ${frameAncestors.join(' ')}`],
    ['cross-origin-opener-policy', 'same-origin'],
    ['cross-origin-resource-policy', 'same-origin'],
    ['origin-agent-cluster', '?1'],
    ['referrer-policy', 'no-referrer'],
    ['x-content-type-options', 'nosniff'],
    ['x-dns-prefetch-control', 'off'],
    ['x-download-options', 'noopen'],
    ['x-permitted-cross-domain-policies', 'none'],
    ['x-xss-protection', '0'],
    // X-Frame-Options cannot list origins: sent only where it says the same as frame-ancestors.
    ...(onlySelf || none ? [['x-frame-options', onlySelf ? 'SAMEORIGIN' : 'DENY'] as [string, string]] : []),
    ...(https ? [['strict-transport-security', 'max-age=31536000'] as [string, string]] : []),
  ];
};

export const securityHeaders = (settings: HeaderSettings): MiddlewareHandler<AppEnv> => {
  const list = securityHeaderList(settings);
  const asMap = new Map(list);
  const jsonHeaders = Object.freeze({ 'Content-Type': 'application/json', ...Object.fromEntries(list) });
  return async (c, next) => {
    c.set('jsonHeaders', jsonHeaders);
    await next();
    if (c.res === c.get('headedAnswer')) return;
    const { outgoing } = nodeOf(c);
    if (outgoing) {
      if (!outgoing.headersSent) outgoing.setHeaders(asMap);
      return;
    }
    // In-process (app.request, embedding): no Node response to set them on.
    for (const [name, value] of list) if (!c.res.headers.has(name)) c.res.headers.set(name, value);
  };
};
