/**
 * The front-door guard, after authentication and before any route runs (public, data-free routes
 * excepted). It keeps a web page in a browser on this machine from driving the service:
 *
 * - Host: a caller without a token (the default mode's local caller) must name this service by a
 *   loopback name with the server's port (127.0.0.1, localhost, [::1]), the listening address, or
 *   a name in POWERPLAN_ALLOWED_HOSTS. A DNS-rebinding page, whose own name resolves to 127.0.0.1,
 *   sends its own name and is refused. A caller with a valid token may use any name: a browser never
 *   adds the token by itself.
 * - Origin, when present, must be the service's own origin or, for a caller with a token, one
 *   listed in POWERPLAN_CORS_ORIGINS (a listed portal calls with a token; without one, a page on
 *   that origin would borrow the local caller's rights). `Sec-Fetch-Site` must be `same-origin` or
 *   `none` (typed by the user) for a caller without a token, and anything but `cross-site` without
 *   an accepted Origin for one with a token. curl, Ansible, PowerShell and the CLI send neither.
 * - A request with a body must say Content-Type: application/json, so that no "simple" cross-site
 *   request (text/plain, a form) can carry one.
 */
import type { MiddlewareHandler } from 'hono';
import { localCaller } from '../../domain/scopes.ts';
import { LOOPBACK_NAMES } from '../../lib/loopback.ts';
import { type AppEnv, nodeOf } from './env.ts';
import type { PublicMatcher } from './public-routes.ts';
import { Refusal } from './refusals.ts';

export interface GuardSettings {
  /** POWERPLAN_ALLOWED_HOSTS: `name` (any port) or `name:port`, lower case. */
  allowedHosts: readonly string[];
  /** POWERPLAN_CORS_ORIGINS. */
  corsOrigins: readonly string[];
  /** POWERPLAN_HOST: the listening address, accepted as a name like the loopback ones. */
  listenHost: string;
  https: boolean;
  isPublic: PublicMatcher;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);
const HOST = /^(\[[0-9a-f:.]*\]|[^:[\]]*)(?::(\d{1,5}))?$/;
const JSON_TYPE = /^application\/json\s*(;|$)/i;
const BODY_METHODS = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/** The server's port as the connection sees it; socket.localPort asks the kernel, so once per socket. */
const ports = new WeakMap<object, number | undefined>();
const localPortOf = (socket: { localPort?: number } | undefined): number | undefined => {
  if (!socket) return undefined;
  if (!ports.has(socket)) ports.set(socket, socket.localPort);
  return ports.get(socket);
};

const shown = (value: string) => (value.length > 100 ? `${value.slice(0, 100)}...` : value);

export const frontDoorGuard = (settings: GuardSettings): MiddlewareHandler<AppEnv> => {
  const { isPublic, https } = settings;
  const listen = settings.listenHost.toLowerCase();
  const portNames = new Set([
    ...LOOPBACK_NAMES,
    ...(WILDCARDS.has(listen)
      ? []
      : [listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen]),
  ]);
  const anyPort = new Set(settings.allowedHosts.filter((h) => !HOST.exec(h)?.[2]));
  const exact = new Set(settings.allowedHosts.filter((h) => HOST.exec(h)?.[2]));
  const origins = new Set(settings.corsOrigins.map((o) => o.toLowerCase()));
  const defaultPort = https ? 443 : 80;

  /** Whether a tokenless caller may use this Host; `port` is the server's (undefined in-process). */
  const hostAllowed = (host: string, port: number | undefined): boolean => {
    const m = HOST.exec(host);
    if (!m) return false;
    const name = m[1]!;
    const given = m[2] === undefined ? defaultPort : Number(m[2]);
    if (anyPort.has(name) || exact.has(`${name}:${given}`)) return true;
    return portNames.has(name) && (port === undefined || given === port);
  };

  return async (c, next) => {
    const method = c.req.method;
    if (isPublic(method, c.req.path)) return next();
    const { incoming } = nodeOf(c);
    // Node's server requires a Host from HTTP/1.1 clients; in-process requests name it in the URL.
    const host = (c.req.header('host') ?? new URL(c.req.url).host).toLowerCase();
    const tokenless = c.get('caller').name === localCaller.name;
    if (tokenless && !hostAllowed(host, localPortOf(incoming?.socket))) {
      throw new Refusal(
        'forbidden',
        'host',
        `Host '${shown(host)}' is not a name this service answers to without a token. Use ` +
          '127.0.0.1, localhost or [::1] with its port, list the name in POWERPLAN_ALLOWED_HOSTS, or send a token.',
      );
    }
    const origin = c.req.header('origin')?.toLowerCase();
    const own = origin === `${https ? 'https' : 'http'}://${host}`;
    const listed = origin !== undefined && origins.has(origin);
    if (origin !== undefined && !own && !(listed && !tokenless)) {
      throw new Refusal(
        'forbidden',
        'origin',
        listed
          ? `Origin '${shown(origin)}' is listed in POWERPLAN_CORS_ORIGINS, but a listed origin may call only with a ` +
              'token (Authorization: Bearer): without one, any page on it would act as a local user.'
          : `Origin '${shown(origin)}' may not call this service: only its own pages and, with a token, the origins in ` +
              'POWERPLAN_CORS_ORIGINS may.',
      );
    }
    const site = c.req.header('sec-fetch-site')?.toLowerCase();
    if (
      site !== undefined &&
      (tokenless ? site !== 'same-origin' && site !== 'none' : site === 'cross-site' && !listed && !own)
    ) {
      throw new Refusal(
        'forbidden',
        'cross_site',
        `A request from another site's web page may not call this service${tokenless ? ' without a token' : ''} (Sec-Fetch-Site: ${shown(site)}).`,
      );
    }
    if (BODY_METHODS.has(method)) {
      const type = c.req.header('content-type');
      const hasBody = incoming
        ? c.req.header('transfer-encoding') !== undefined || Number(c.req.header('content-length') ?? 0) > 0
        : c.req.raw.body !== null;
      if (type === undefined ? hasBody : !JSON_TYPE.test(type)) {
        throw new Refusal(
          'unsupported_media_type',
          'content_type',
          `A request body must be JSON sent with Content-Type: application/json (got ${type === undefined ? 'none' : `'${shown(type)}'`}).`,
        );
      }
    }
    return next();
  };
};
