/**
 * The loads perf/workload.ts puts on the throwaway cluster: pgbench with `--rate` (Poisson
 * arrivals; its latency counts from the scheduled start, so queueing behind a slowed query shows)
 * running a one-query custom script of a calibrated CPU cost, and a restore with pg_restore of a
 * generated dump, paced like a restore waiting for its storage: the dump is fed in chunks, and the
 * next chunk is only read after the server has finished the previous one and the storage wait has
 * passed (work and waits strictly in turn: a source running ahead would keep the server busy
 * through the waits and hide what the plan does after each of them).
 */
import { execFileSync, spawn } from 'node:child_process';
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster } from './postgres.ts';

/**
 * A query of about `rows` rows of work (CPU only, no table). The series is made in the select list,
 * where its rows stream to the sum (ProjectSet): in FROM it is first stored in a tuplestore, which
 * goes to a temporary file beyond work_mem (4 MB, about 100,000 rows), and the query is no longer
 * CPU only (2026-12-03: 106,181 rows took 17.6 ms of server CPU, 166 ns a row, against 85-100 ns
 * a row below it).
 */
export const queryScript = (rows: number): string =>
  `SELECT sum(i * 7 % 13) FROM (SELECT generate_series(1, ${Math.round(rows)}) AS i) AS series;\n`;

export interface PgbenchResult {
  transactions: number;
  tps: number;
  latencyMs: number;
  latencyStddevMs: number;
  lagMs: number;
}

export const parsePgbench = (text: string): PgbenchResult => {
  const num = (re: RegExp) => {
    const m = re.exec(text);
    if (!m) throw new Error(`pgbench output without ${re}: ${text.slice(-600)}`);
    return Number(m[1]);
  };
  return {
    transactions: num(/number of transactions actually processed: (\d+)/),
    tps: num(/tps = ([\d.]+)/),
    latencyMs: num(/latency average = ([\d.]+) ms/),
    latencyStddevMs: /latency stddev = ([\d.]+) ms/.test(text) ? num(/latency stddev = ([\d.]+) ms/) : 0,
    lagMs: /schedule lag: avg ([\d.]+)/.test(text) ? num(/schedule lag: avg ([\d.]+)/) : 0,
  };
};

/** Writes the script where `postgres` can read it; answers its path. */
const scriptFile = async (cluster: Cluster, rows: number): Promise<string> => {
  const path = join(cluster.dir, `query-${Math.round(rows)}.sql`);
  await writeFile(path, queryScript(rows), { mode: 0o644 });
  return path;
};

/** pgbench, one client, `--rate` per second (omit for back to back) for `seconds` or `transactions`. */
export const pgbench = async (
  cluster: Cluster,
  o: { rows: number; rate?: number; seconds?: number; transactions?: number },
): Promise<PgbenchResult> => {
  const file = await scriptFile(cluster, o.rows);
  const args = ['-n', '-c', '1', '-j', '1', '-f', file, 'postgres'];
  if (o.rate !== undefined) args.push('-R', String(o.rate));
  if (o.transactions !== undefined) args.push('-t', String(o.transactions));
  else args.push('-T', String(o.seconds ?? 10));
  const r = await cluster.client('pgbench', args);
  if (r.code !== 0) throw new Error(`pgbench failed: ${r.stderr}`);
  return parsePgbench(r.stdout);
};

/** Creates a table of `rows` rows in database `source` and dumps it (custom format, uncompressed). */
export const makeDump = async (cluster: Cluster, rows: number): Promise<string> => {
  const sql = [
    'CREATE DATABASE source;',
    '\\c source',
    'CREATE TABLE items (id bigint PRIMARY KEY, name text, qty int, price numeric(12,2), note text);',
    `INSERT INTO items SELECT i, 'item ' || i, i % 97, (i % 1000) / 7.0, md5(i::text) FROM generate_series(1, ${rows}) i;`,
  ].join('\n');
  const setup = await cluster.client('psql', ['-q', '-v', 'ON_ERROR_STOP=1', '-c', sql.split('\n')[0]!]);
  if (setup.code !== 0) throw new Error(`createdb failed: ${setup.stderr}`);
  const fill = await cluster.client('psql', [
    '-q',
    '-v',
    'ON_ERROR_STOP=1',
    '-d',
    'source',
    '-c',
    sql.split('\n').slice(2).join('\n'),
  ]);
  if (fill.code !== 0) throw new Error(`filling the table failed: ${fill.stderr}`);
  const path = join(cluster.dir, 'source.dump');
  const dump = await cluster.client('pg_dump', ['-Fc', '-Z0', '-f', path, 'source']);
  if (dump.code !== 0) throw new Error(`pg_dump failed: ${dump.stderr}`);
  // The table's dirty buffers written now, and the files to disk, so that no background writer
  // does it during the first benchmark, which runs next and whose losses under no emulation stand
  // for the platform's.
  const flushed = await cluster.client('psql', ['-q', '-v', 'ON_ERROR_STOP=1', '-c', 'CHECKPOINT']);
  if (flushed.code !== 0) throw new Error(`checkpoint failed: ${flushed.stderr}`);
  execFileSync('sync');
  return path;
};

const procState = async (pid: number): Promise<string> => {
  const s = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ') X');
  return s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3);
};

const backendOf = async (postmaster: number, db: string): Promise<number | null> => {
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const stat = await readFile(`/proc/${e}/stat`, 'utf8').catch(() => '');
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== postmaster) continue;
    const cmd = await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(` ${db} `)) return Number(e);
  }
  return null;
};

export interface RestoreResult {
  totalMs: number;
  /** The time the restore spent working on its timed chunks (each from its write until both were asleep). */
  workMs: number;
  /** The chunks timed: all but the last (fed after afterChunks, see pacedRestore). */
  chunks: number;
}

/**
 * Restores `dump` into a new database `db`, feeding pg_restore `chunkBytes` at a time: after each
 * chunk it waits until pg_restore and the server's backend are both asleep (the chunk is done),
 * then `waitMs` (the storage), then sends the next. `beforeChunks` runs before the first chunk (the
 * database made, pg_restore started), `afterChunks` once every chunk but the last is done, while
 * pg_restore and its backend still live; the last chunk and what follows it (the index builds of
 * the post-data section, no paced work) are not timed.
 */
export const pacedRestore = async (
  cluster: Cluster,
  o: {
    dump: string;
    db: string;
    chunkBytes: number;
    waitMs: number;
    /** The CPU pg_restore runs on (the cluster's clients' where not given). */
    cpu?: number;
    beforeChunks?: () => Promise<void>;
    afterChunks?: () => Promise<void>;
  },
): Promise<RestoreResult> => {
  const made = await cluster.client('psql', ['-q', '-c', `CREATE DATABASE ${o.db}`]);
  if (made.code !== 0) throw new Error(`createdb failed: ${made.stderr}`);
  const [cmd, args] = cluster.clientCommand('pg_restore', ['-d', o.db, '--no-owner'], o.cpu);
  const child = spawn(cmd, args, {
    env: { PATH: '/usr/bin:/bin', PGHOST: cluster.socketDir, PGPORT: String(cluster.port) },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number>((r) => child.once('exit', (c) => r(c ?? 1)));
  const fh = await open(o.dump, 'r');
  const buf = Buffer.alloc(o.chunkBytes);
  // The last chunk is fed after the timed ones: pg_restore reaches the archive's end with it, runs
  // the post-data steps and exits, and its backend with it, before a read after the chunk could
  // take their counters (a process that has exited takes them along).
  const total = Math.ceil((await fh.stat()).size / o.chunkBytes);
  let backend: number | null = null;
  let sent = 0;
  let chunks = 0;
  let workMs = 0;
  let timed = true;
  await o.beforeChunks?.();
  const t0 = performance.now();
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      if (timed && sent > 0 && sent === total - 1) {
        await o.afterChunks?.();
        timed = false;
      }
      if (sent > 0) await sleep(o.waitMs);
      const c0 = performance.now();
      await new Promise<void>((res, rej) =>
        child.stdin.write(buf.subarray(0, bytesRead), (e) => (e ? rej(e) : res())),
      );
      sent++;
      // The chunk is done when both are asleep twice in a row (a throttled process is runnable).
      for (let quiet = 0; quiet < 2; ) {
        await sleep(0.2);
        backend ??= await backendOf(cluster.pid, o.db);
        const states = [await procState(child.pid ?? 0), backend === null ? 'S' : await procState(backend)];
        quiet = states.every((s) => s === 'S') ? quiet + 1 : 0;
        if (child.exitCode !== null) break;
      }
      if (timed) {
        chunks++;
        workMs += performance.now() - c0;
      }
    }
    if (timed) await o.afterChunks?.();
    child.stdin.end();
    const code = await exited;
    if (code !== 0) throw new Error(`pg_restore exited with ${code}: ${err}`);
  } finally {
    await fh.close();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  const totalMs = performance.now() - t0;
  await cluster.client('psql', ['-q', '-c', `DROP DATABASE ${o.db}`]);
  return { totalMs, workMs, chunks };
};
