/**
 * One contender of the lock race test: waits for "go" on stdin, then tries once to take each of
 * the stale locks `<dir>/round-<n>.lock` in turn, keeping the ones it wins, and prints the rounds
 * it won as JSON. It stays alive (its locks live) until its stdin closes.
 */
import { join } from 'node:path';
import { FileLock } from '../../src/lib/file-lock.ts';

const [dir, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText);
const won: number[] = [];
const lost: number[] = [];
process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  for (let r = 0; r < rounds; r++) {
    const lock = new FileLock(join(dir!, `round-${r}.lock`), { code: 'conflict', heldMessage: () => 'held' });
    try {
      await lock.acquire(`round ${r}`);
      won.push(r);
    } catch {
      lost.push(r);
    }
  }
  process.stdout.write(`${JSON.stringify({ won, lost })}\n`);
});
process.stdin.resume();
