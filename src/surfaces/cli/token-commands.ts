/**
 * The `powerplan token create|list|revoke` commands. They edit the token file on this host (the
 * file is the only place tokens are managed; no remote caller can create one). A new token is
 * printed once and only its SHA-256 is kept.
 */
import type { Config } from '../../config.ts';
import { PowerPlanError } from '../../domain/errors.ts';
import { table } from '../../lib/table.ts';
import { createToken, parseScopes, readTokenFile, revokeToken } from '../../lib/tokens.ts';
import { restrictToAdmins } from '../../lib/windows-acl.ts';
import type { CliIo, ServiceCommand } from './command.ts';
import { usageError } from './usage.ts';

/** Every write replaces the token file: on Windows it gets its explicit ACL each time (SYSTEM, Administrators). */
const restrictTokenFile = async (config: Config, path: string): Promise<void> => {
  if (config.aclCheck === 'always' || process.platform === 'win32') {
    await restrictToAdmins(path, false, { icacls: config.icacls });
  }
};

const tokenFileOf = (config: Config): string => {
  if (!config.tokenFile) {
    throw new PowerPlanError(
      'invalid_input',
      'Invalid configuration:\n  POWERPLAN_TOKEN_FILE: not set. Set POWERPLAN_TOKEN_FILE or pass --token-file <path> ' +
        '(e.g. /etc/powerplan/tokens.json), and start the server with the same setting.',
    );
  }
  return config.tokenFile;
};

const usage = (io: CliIo, message: string): number => usageError(io, message, ['token', '<command>']);

export const tokenCommands: ServiceCommand[] = [
  {
    command: ['token', 'create'],
    usage: 'token create --name <name> --scopes <read,benchmark,control>',
    summary: 'Create an API token; it is printed once, the token file keeps only its SHA-256.',
    options: { name: { type: 'string' }, scopes: { type: 'string' } },
    run: async ({ values, positionals, config, io }) => {
      if (positionals.length) return usage(io, `unexpected argument '${positionals[0]}'`);
      if (typeof values.name !== 'string') return usage(io, "'token create' needs --name <name>");
      if (typeof values.scopes !== 'string') {
        return usage(io, "'token create' needs --scopes, e.g. --scopes read or --scopes read,control");
      }
      const scopes = parseScopes(values.scopes);
      const path = tokenFileOf(config());
      const { token, entry } = await createToken(path, values.name, scopes);
      await restrictTokenFile(config(), path);
      if (values.json === true) {
        io.out(
          `${JSON.stringify({ name: entry.name, scopes: entry.scopes, created: entry.created, token }, null, 2)}\n`,
        );
      } else {
        io.out(`${token}\n`);
      }
      io.err(
        `Created token '${entry.name}' (${entry.scopes.join(', ')}) in ${path}. It is shown only this once: ` +
          'store it now. Send it as Authorization: Bearer <token>.\n',
      );
      return 0;
    },
  },
  {
    command: ['token', 'list'],
    summary: 'List API tokens: names, scopes, creation time (never the tokens).',
    run: async ({ values, positionals, config, io }) => {
      if (positionals.length) return usage(io, `unexpected argument '${positionals[0]}'`);
      const path = tokenFileOf(config());
      const list = (await readTokenFile(path)).tokens.map(({ name, scopes, created }) => ({
        name,
        scopes,
        created,
      }));
      if (values.json === true) {
        io.out(`${JSON.stringify({ tokens: list }, null, 2)}\n`);
      } else if (list.length === 0) {
        io.out(`No tokens in ${path}.\n`);
      } else {
        const rows = list.map((t) => [t.name, t.scopes.join(','), t.created]);
        io.out(`${table(['NAME', 'SCOPES', 'CREATED'], rows)}\n`);
      }
      return 0;
    },
  },
  {
    command: ['token', 'revoke'],
    usage: 'token revoke <name>',
    summary: 'Revoke an API token by name; a running server refuses it from the next request.',
    run: async ({ positionals, config, io }) => {
      if (positionals.length !== 1) return usage(io, "'token revoke' needs exactly one <name>");
      const path = tokenFileOf(config());
      await revokeToken(path, positionals[0]!);
      await restrictTokenFile(config(), path);
      io.err(`Revoked token '${positionals[0]}'.\n`);
      return 0;
    },
  },
];
