/**
 * API tokens: the token file holds, per token, its name, scopes, creation time and the SHA-256 of
 * the token, never the token itself, so a leaked file grants nothing. Tokens are checked in
 * constant time against every entry, and the file is re-read when it changes on disk, so
 * `powerplan token create/revoke` take effect in a running server without a restart.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { isPowerPlanError, PowerPlanError } from '../domain/errors.ts';
import { type Caller, Scope } from '../domain/scopes.ts';
import { FileLock } from './file-lock.ts';
import { damagedBeside, keepAside } from './keep-aside.ts';
import { Lock } from './lock.ts';
import { replaceFile } from './replace-file.ts';
import { guardFileDirectory, orRemove, readStateFile, writeNewFile } from './safe-fs.ts';
import { tempPath } from './temp-files.ts';

/** Token names end up in the audit log and in log lines: keep them plain. */
export const TOKEN_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/i;
/** Names with a meaning of their own in the audit log. */
const reservedNames = new Set(['local', 'local-admin', 'service']);

export const TokenName = z
  .string()
  .regex(
    TOKEN_NAME,
    'must be 1-63 letters, digits, dots, dashes or underscores, starting with a letter or digit',
  )
  .refine((n) => !reservedNames.has(n.toLowerCase()), 'is reserved (local, local-admin, service)');

export const TokenEntry = z
  .object({
    name: TokenName,
    scopes: z.array(Scope).min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits'),
    created: z.string(),
  })
  .strict();
export type TokenEntry = z.infer<typeof TokenEntry>;

export const TokenFile = z.object({ tokens: z.array(TokenEntry) }).strict();
export type TokenFile = z.infer<typeof TokenFile>;

const TOKEN_PREFIX = 'pp_';
/** What a token looks like: the prefix and 32 random bytes in base64url. */
export const TOKEN_SHAPE = /^pp_[A-Za-z0-9_-]{43}$/;

export const newToken = (): string => TOKEN_PREFIX + randomBytes(32).toString('base64url');

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Parses `read,control` into scopes; an unknown scope is a caller error naming the valid ones. */
export const parseScopes = (text: string): Scope[] => {
  const parts = [...new Set(text.split(',').map((s) => s.trim().toLowerCase()))].filter(Boolean);
  const bad = parts.filter((p) => !Scope.safeParse(p).success);
  if (parts.length === 0 || bad.length) {
    throw new PowerPlanError(
      'invalid_input',
      `--scopes: ${bad.length ? `unknown scope(s) ${bad.map((b) => `'${b}'`).join(', ')}` : 'empty'}; use a comma-separated list of read, benchmark, control (control implies the others).`,
    );
  }
  return parts as Scope[];
};

const invalidFile = (path: string, why: string) =>
  new PowerPlanError(
    'invalid_input',
    `The token file ${path} is not valid (${why}). Fix the kept copy and move it back, or create new tokens with 'powerplan token create'.`,
  );

/**
 * Reads the token file; an absent file is an empty one. A file that is not valid is kept aside as
 * `<name>.corrupt-<time>` (never overwritten by the next `token create`) and reported as an error.
 */
export const readTokenFile = async (path: string): Promise<TokenFile> => {
  // Never through a link, only a file of this user or root that no one else can write, in
  // directories no one else can write: otherwise another user could add their own token.
  guardFileDirectory(path, 'token file');
  const read = await readStateFile(path, { what: 'The token file' });
  if (!read) return { tokens: [] };
  const { text } = read;
  const ino = BigInt(read.stats.ino);
  let why: string | undefined;
  let parsed: ReturnType<typeof TokenFile.safeParse> | undefined;
  try {
    parsed = TokenFile.safeParse(JSON.parse(text));
    if (!parsed.success) why = parsed.error.issues.map((i) => i.message).join('; ');
  } catch {
    why = 'not JSON';
  }
  if (parsed?.success) return parsed.data;
  const keptAs = await keepAside(path, ino);
  throw invalidFile(path, keptAs ? `${why}; kept aside as ${keptAs} beside it` : (why ?? 'unreadable'));
};

/** Replaces the token file atomically (temp file, fsync, rename), readable by its owner only. */
export const writeTokenFile = async (path: string, file: TokenFile): Promise<void> => {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = tempPath(path);
  await writeNewFile(tmp, `${JSON.stringify(TokenFile.parse(file), null, 2)}\n`, { what: 'The token file' });
  await orRemove(tmp, () => replaceFile(tmp, path));
};

/**
 * Runs a read-modify-write of the token file under a lock file beside it, so that two `token create`
 * at the same moment (two shells, or Ansible on several hosts sharing a file) both keep their entry.
 */
const underFileLock = <T>(path: string, what: string, fn: () => Promise<T>): Promise<T> =>
  new Lock(
    'The token file',
    new FileLock(`${path}.lock`, {
      code: 'conflict',
      staleMs: 60_000,
      heldMessage: (h) =>
        `The token file is being changed by ${h.what} (process ${h.pid || 'starting'}); try again.`,
    }),
  ).run(what, fn, 10_000);

export const createToken = async (
  path: string,
  name: string,
  scopes: Scope[],
  now = new Date(),
): Promise<{ token: string; entry: TokenEntry }> => {
  const checked = TokenName.safeParse(name);
  if (!checked.success) {
    throw new PowerPlanError('invalid_input', `--name: ${checked.error.issues[0]?.message ?? 'invalid'}`);
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return underFileLock(path, `token create ${name}`, async () => {
    const file = await readTokenFile(path);
    if (file.tokens.some((t) => t.name.toLowerCase() === name.toLowerCase())) {
      throw new PowerPlanError(
        'conflict',
        `A token named '${name}' exists already; revoke it first or choose another name.`,
      );
    }
    const token = newToken();
    const entry: TokenEntry = { name, scopes, sha256: hashToken(token), created: now.toISOString() };
    await writeTokenFile(path, { tokens: [...file.tokens, entry] });
    return { token, entry };
  });
};

export const revokeToken = (path: string, name: string): Promise<void> =>
  underFileLock(path, `token revoke ${name}`, async () => {
    const file = await readTokenFile(path);
    const kept = file.tokens.filter((t) => t.name.toLowerCase() !== name.toLowerCase());
    if (kept.length === file.tokens.length) {
      throw new PowerPlanError('not_found', `No token named '${name}' in ${path}.`, {
        names: file.tokens.map((t) => t.name),
      });
    }
    await writeTokenFile(path, { tokens: kept });
  });

/** The outcome of checking a presented token. */
export type Verdict =
  | { ok: true; caller: Caller }
  | { ok: false; reason: 'missing' | 'malformed' | 'unknown' };

/** How often a failed read of the token file is tried again before the reload gives up for now. */
const READ_ATTEMPTS = 3;

/**
 * Checks bearer tokens against the token file, re-reading it when its identity, size or mtime
 * change. The entries are swapped only after a complete, valid read, and a request arriving during
 * a reload waits for it, so a revoked token is refused from the moment the new file is read. A file
 * that turns invalid while running rejects every token (fail closed) until fixed. A read that fails
 * (EMFILE, EACCES, EIO: the file may be fine) is tried again and, failing still, keeps the entries
 * in force and is retried on the next request; only a first read that fails leaves no tokens.
 */
export class TokenVerifier {
  readonly path: string;
  private entries: { entry: TokenEntry; digest: Buffer }[] = [];
  private seen = '';
  private loaded = false;
  private loading: Promise<void> | undefined;
  private broken: string | undefined;
  private reported: string | undefined;
  private readonly onProblem: (message: string, tokensKept: boolean) => void;

  /** Checks the file's owner and ACL before each read (Windows: windows-state-guard.ts). */
  private readonly checkFile: ((path: string) => Promise<void>) | undefined;

  /**
   * `onProblem` hears of each new problem once: the message, and whether earlier tokens stay valid.
   * `checkFile`, when given, runs before every read of a changed file; its refusal (unsafe
   * permissions) is handled like one of the POSIX checks.
   */
  constructor(
    path: string,
    onProblem: (message: string, tokensKept: boolean) => void = () => {},
    checkFile?: (path: string) => Promise<void>,
  ) {
    this.path = path;
    this.onProblem = onProblem;
    this.checkFile = checkFile;
  }

  private report(message: string, tokensKept: boolean): void {
    if (message === this.reported) return;
    this.reported = message;
    this.onProblem(message, tokensKept);
  }

  /** Reloads when the file changed; safe to call on every request (one stat, shared while running). */
  refresh(): Promise<void> {
    this.loading ??= this.reload().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async fileKey(): Promise<string> {
    try {
      // ctime too: a chmod that makes the file safe again changes nothing else.
      const s = await stat(this.path, { bigint: true });
      return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
      throw e;
    }
  }

  private async reload(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      let key: string | undefined;
      try {
        key = await this.fileKey();
        if (key === this.seen) return;
        if (key !== 'absent') await this.checkFile?.(this.path);
        const file = await readTokenFile(this.path);
        this.entries = file.tokens.map((entry) => ({ entry, digest: Buffer.from(entry.sha256, 'hex') }));
        this.broken = undefined;
        this.reported = undefined;
        this.loaded = true;
        this.seen = key;
        // Gone because it was damaged and kept aside: still broken until tokens exist again.
        const kept = key === 'absent' ? damagedBeside(this.path).at(-1) : undefined;
        if (kept) {
          this.broken = `The token file ${this.path} was damaged and kept aside as ${kept.keptAs}; fix it and move it back, or create new tokens.`;
          this.report(this.broken, false);
        }
        return;
      } catch (e) {
        if (isPowerPlanError(e) && e.details?.unsafePermissions === true && this.loaded) {
          // Another user could have written it: the tokens read before stay, the new ones are not read.
          this.seen = key ?? '';
          this.report(`${e.message} The tokens read before stay in force until it is fixed.`, true);
          return;
        }
        if (isPowerPlanError(e)) {
          // The content is wrong: no token is accepted until the file changes again.
          this.entries = [];
          this.broken = e.message;
          this.seen = key ?? '';
          this.report(this.broken, false);
          return;
        }
        if (attempt < READ_ATTEMPTS) {
          await delay(10 * attempt);
          continue;
        }
        const why = `cannot read ${this.path} (${(e as NodeJS.ErrnoException).code ?? e})`;
        if (!this.loaded) this.broken = why;
        this.report(why, this.loaded);
        return;
      }
    }
  }

  get problem(): string | undefined {
    return this.broken;
  }

  get size(): number {
    return this.entries.length;
  }

  /** Compares the token's digest with every entry in constant time, without stopping at a match. */
  async verify(token: string | undefined, remote?: string): Promise<Verdict> {
    await this.refresh();
    if (token === undefined || token === '') return { ok: false, reason: 'missing' };
    if (!TOKEN_SHAPE.test(token)) return { ok: false, reason: 'malformed' };
    const digest = createHash('sha256').update(token, 'utf8').digest();
    let match: TokenEntry | undefined;
    for (const { entry, digest: known } of this.entries) {
      if (timingSafeEqual(digest, known) && !match) match = entry;
    }
    if (!match) return { ok: false, reason: 'unknown' };
    return {
      ok: true,
      caller: { name: match.name, scopes: match.scopes, ...(remote ? { remote } : {}) },
    };
  }
}
