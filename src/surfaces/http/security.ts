/**
 * The HTTP server's settings, decided once at start-up from the configuration: refuse to listen
 * beyond loopback without a token file, the token file, optional TLS, CORS origins, frame
 * ancestors, and timeouts for slow clients. Bad settings stop the start with a message naming the
 * variable (exit 2), before anything listens. The app (app.ts) installs what they decide.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import { PowerPlanError, startupError } from '../../domain/errors.ts';
import { type AdminCredential, ensureAdminCredential } from '../../lib/admin-token.ts';
import { isLoopbackHost } from '../../lib/loopback.ts';
import { TokenVerifier } from '../../lib/tokens.ts';
import { restrictToAdmins } from '../../lib/windows-acl.ts';
import { refuseUnsafe } from '../../lib/windows-state-guard.ts';

/**
 * Node's limits on receiving a request (not on running it: a benchmark may take 20 s or more and
 * is bounded by its own duration and the shutdown signal). They stop slow-loris clients.
 */
export const SERVER_TIMEOUTS = { headersTimeout: 15_000, requestTimeout: 30_000 };

const configError = (variable: string, message: string) =>
  new PowerPlanError('invalid_input', `Invalid configuration:\n  ${variable}: ${message}`);

/** Why listening on host:port failed, in words, with what to do about it. */
export const listenFailure = (e: NodeJS.ErrnoException, host: string, port: number) => {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (e.code) {
    case 'EADDRINUSE':
      return startupError(
        `${where} is already in use by another program (or another powerplan); choose another port with --port or POWERPLAN_PORT.`,
        e,
      );
    case 'EADDRNOTAVAIL':
      return startupError(
        `${host} is not an address of this machine; choose one of its addresses with --host or POWERPLAN_HOST (127.0.0.1 for this machine only).`,
        e,
      );
    case 'EACCES':
      return startupError(
        `not allowed to listen on ${where} (ports below 1024 need privileges); choose a port above 1023 with --port or POWERPLAN_PORT.`,
        e,
      );
    default:
      return startupError(`cannot listen on ${where}: ${e.message}`, e);
  }
};

const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/;
const FRAME_SOURCE = /^(?:'self'|https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?)$/;

export const parseCorsOrigins = (text: string | undefined): string[] => {
  if (!text) return [];
  const origins = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = origins.filter((o) => !ORIGIN.test(o));
  if (bad.length) {
    throw configError(
      'POWERPLAN_CORS_ORIGINS',
      `not an origin: ${bad.join(', ')}; list origins as scheme://host[:port], comma-separated (no '*', no path).`,
    );
  }
  return origins;
};

export const parseFrameAncestors = (text: string): string[] => {
  const sources = text.split(/\s+/).filter(Boolean);
  const ok =
    (sources.length === 1 && sources[0] === "'none'") ||
    (sources.length > 0 && sources.every((s) => FRAME_SOURCE.test(s)));
  if (!ok) {
    throw configError(
      'POWERPLAN_FRAME_ANCESTORS',
      `"${text}" is not a frame-ancestors list; use 'none', 'self' or space-separated origins such as ` +
        `"'self' https://portal.example.com".`,
    );
  }
  return sources;
};

export interface HttpSecurity {
  verifier?: TokenVerifier;
  /** The local administrator credential (admin.token in the state directory). */
  admin?: AdminCredential;
  tls?: { key: Buffer; cert: Buffer };
  corsOrigins: string[];
  frameAncestors: string[];
}

const readReasons: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied for this user',
  EPERM: 'permission denied for this user',
  EISDIR: 'a directory, not a file',
};

const readPem = (variable: string, what: string, path: string): Buffer => {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw startupError(
      `the TLS ${what} ${path} (${variable}) cannot be read: ${readReasons[code] ?? (code || e)}.`,
      e,
    );
  }
};

/** The settings that need no file: what an app built in-process (tests, embedding) runs with. */
export const baseSecurity = (config: Config): HttpSecurity => ({
  corsOrigins: parseCorsOrigins(config.corsOrigins),
  frameAncestors: parseFrameAncestors(config.frameAncestors),
});

/** Checks the configuration for the HTTP server; throws a configuration error (exit 2) when unsafe. */
export const loadHttpSecurity = async (config: Config, log: Deps['log']): Promise<HttpSecurity> => {
  if (!config.tokenFile && !isLoopbackHost(config.host)) {
    throw configError(
      'POWERPLAN_HOST',
      `refusing to listen on ${config.host} without a token file: anyone who can reach it could change the ` +
        'power plan. Create a token (POWERPLAN_TOKEN_FILE=/path/tokens.json powerplan token create --name admin ' +
        '--scopes control) and start with POWERPLAN_TOKEN_FILE set, or listen on 127.0.0.1.',
    );
  }
  if (Boolean(config.tlsCert) !== Boolean(config.tlsKey)) {
    throw configError(
      config.tlsCert ? 'POWERPLAN_TLS_KEY' : 'POWERPLAN_TLS_CERT',
      'TLS needs both POWERPLAN_TLS_CERT and POWERPLAN_TLS_KEY (PEM files).',
    );
  }
  const tls =
    config.tlsCert && config.tlsKey
      ? {
          cert: readPem('POWERPLAN_TLS_CERT', 'certificate', config.tlsCert),
          key: readPem('POWERPLAN_TLS_KEY', 'key', config.tlsKey),
        }
      : undefined;
  if (tls) {
    // A file that is no PEM certificate, or a key that does not match it, stops the start here.
    try {
      createSecureContext(tls);
    } catch (e) {
      throw startupError(
        `the TLS certificate ${config.tlsCert} or key ${config.tlsKey} cannot be used (${(e as Error).message}); POWERPLAN_TLS_CERT and POWERPLAN_TLS_KEY must name a PEM certificate and its private key.`,
        e,
      );
    }
  }
  const base = baseSecurity(config);

  let verifier: TokenVerifier | undefined;
  if (config.tokenFile) {
    verifier = new TokenVerifier(
      config.tokenFile,
      (problem, tokensKept) =>
        tokensKept
          ? log.warn(
              'token file not read; the tokens read before stay in force, and it is read again when it changes',
              {
                problem,
              },
            )
          : log.error('token file rejected; no token is accepted until it is fixed', { problem }),
      // On Windows the owner and ACL are checked at every reload, as the mode and owner are on POSIX.
      config.aclCheck === 'always' || process.platform === 'win32'
        ? (path) => refuseUnsafe([{ path, directory: false, what: 'token file' }], config)
        : undefined,
    );
    await verifier.refresh();
    if (verifier.problem) throw configError('POWERPLAN_TOKEN_FILE', verifier.problem);
    if (verifier.size === 0) {
      log.warn('the token file has no tokens yet: every request except /healthz is refused', {
        tokenFile: config.tokenFile,
        hint: 'powerplan token create --name <name> --scopes read',
      });
    }
  }
  const admin = await ensureAdminCredential(config.stateDir, {
    ...(config.aclCheck === 'always' || process.platform === 'win32'
      ? { restrict: (path: string) => restrictToAdmins(path, false, { icacls: config.icacls }) }
      : {}),
    onReplaced: (why) => log.warn('local administrator credential replaced', { why }),
  });
  return { ...base, admin, ...(verifier ? { verifier } : {}), ...(tls ? { tls } : {}) };
};

/** Options for @hono/node-server's `serve`: HTTPS when configured, and the receive timeouts. */
export const serveOptions = (sec: HttpSecurity) =>
  sec.tls
    ? {
        createServer: createHttpsServer,
        serverOptions: { key: sec.tls.key, cert: sec.tls.cert, ...SERVER_TIMEOUTS },
      }
    : { serverOptions: { ...SERVER_TIMEOUTS } };
