/**
 * A tiny structured logger: one JSON line per event on stderr (stdout belongs to the CLI's output
 * and to MCP over stdio).
 *
 * Nothing token-shaped leaves it: whatever a caller put in a path, a query, a header or a body
 * that ends up in a field, a bearer token (`pp_...`, percent-encoded too) and the credential after
 * `Bearer` or `Basic` are replaced by `[redacted]` in the finished line, so no call site has to
 * remember it.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** This service's tokens (`pp_` and 43 base64url characters), whole or in part, `_` percent-encoded or not. */
const OWN_TOKEN = /(?<![A-Za-z0-9])pp(?:_|%5[fF])[A-Za-z0-9_%-]{4,}/g;
/** The credential of an Authorization-like value, wherever it was copied to. */
const SCHEME_CREDENTIAL = /\b(Bearer|Basic)(\s|%20|\+)+[^\s"\\,;&]+/gi;

/** A log line (or any text bound for one) with every token-shaped part replaced. */
export const redactSecrets = (line: string): string =>
  line.replace(SCHEME_CREDENTIAL, '$1 [redacted]').replace(OWN_TOKEN, 'pp_[redacted]');

export const createLogger = (
  level: LogLevel,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger => {
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < order[level]) return;
    write(
      `${redactSecrets(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }))}\n`,
    );
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
};
