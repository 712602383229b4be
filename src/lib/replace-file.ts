/**
 * Replaces `target` with `source` atomically (rename), the one way state files, the token file and
 * lock takeovers are swapped in. On Windows a rename onto a file that another process has open at
 * that instant (a reader in the middle of readFile) fails with EPERM, EACCES or EBUSY although
 * nothing is wrong: the reader closes it within milliseconds. So there the rename is tried again,
 * for up to a second, before the error is the caller's. Elsewhere such an error is final at once.
 */
import { rename } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

const TRANSIENT_ON_WINDOWS = new Set(['EPERM', 'EACCES', 'EBUSY']);
const RETRY_FOR_MS = 1000;

export const replaceFile = async (source: string, target: string): Promise<void> => {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      await rename(source, target);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (process.platform !== 'win32' || !TRANSIENT_ON_WINDOWS.has(code) || Date.now() > deadline) throw e;
      await sleep(wait);
    }
  }
};
