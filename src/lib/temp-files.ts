/**
 * Temporary files of atomic writes (write a temp file, then rename or link it into place). Every
 * one is named `<target>.<pid>.<random>.tmp`, so a file left behind by a process killed mid-write
 * can be told from one being written now: its writer is gone, or it is this pid in an earlier
 * process (a container restarted as pid 1), or it is older than any write takes.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from './process-identity.ts';

const TEMP = /\.(\d+)\.[0-9a-f]{8}\.tmp$/;
/** No write takes this long: a temp file this old is left over whatever its name says. */
const ABANDONED_MS = 3_600_000;

/** A fresh temp name beside `target`. */
export const tempPath = (target: string): string =>
  `${target}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;

/** Removes the temp files in `dir` that no live writer will finish; answers their names. */
export const removeLeftovers = (dir: string, now = Date.now()): string[] => {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const startedAt = now - process.uptime() * 1000;
  const removed: string[] = [];
  for (const name of names) {
    const m = TEMP.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st?.isFile()) continue;
    const pid = Number(m[1]);
    const left =
      now - st.mtimeMs > ABANDONED_MS || (pid === process.pid ? st.mtimeMs < startedAt : !processAlive(pid));
    if (!left) continue;
    rmSync(path, { force: true });
    removed.push(name);
  }
  return removed;
};
