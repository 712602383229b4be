/**
 * Reads a file the service trusts (the fleet file, the token files and CA files it names): a
 * regular file of bounded size, owned by this user or root, not writable by others, and for a
 * secret not readable by them either, checked on the open handle so that the file checked is the
 * file read. Paths come from configuration only, never from a request.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { PowerPlanError } from '../domain/errors.ts';

export interface CarefulRead {
  /** How the file is named in errors, e.g. "The fleet file" or "hosts.db1.tokenFile". */
  what: string;
  maxBytes: number;
  /** A secret (a token): group and others may not read it either. */
  secret?: boolean;
}

const posix = process.platform !== 'win32';

export const readCarefully = async (path: string, opts: CarefulRead): Promise<string> => {
  const fail = (why: string) => new PowerPlanError('invalid_input', `${opts.what} (${path}) ${why}`);
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | (posix ? constants.O_NONBLOCK : 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw fail(
      code === 'ENOENT'
        ? 'does not exist.'
        : code === 'EACCES'
          ? 'is not readable by this user.'
          : `cannot be opened (${code}).`,
    );
  }
  try {
    const s = await handle.stat();
    if (!s.isFile()) throw fail('is not a regular file.');
    if (s.size > opts.maxBytes) throw fail(`is larger than ${opts.maxBytes} bytes.`);
    if (posix) {
      const uid = process.getuid?.();
      if (uid !== undefined && s.uid !== uid && s.uid !== 0)
        throw fail(`belongs to another user (uid ${s.uid}); it must belong to this user or root.`);
      if (s.mode & 0o022)
        throw fail(`is writable by group or others (mode ${(s.mode & 0o777).toString(8)}); chmod go-w it.`);
      if (opts.secret && s.mode & 0o077)
        throw fail(
          `is a secret but readable by group or others (mode ${(s.mode & 0o777).toString(8)}); chmod 600 it.`,
        );
    }
    const buf = Buffer.alloc(opts.maxBytes + 1);
    let size = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, size, buf.length - size, size);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > opts.maxBytes) throw fail(`is larger than ${opts.maxBytes} bytes.`);
    }
    return buf.subarray(0, size).toString('utf8');
  } finally {
    await handle.close();
  }
};
