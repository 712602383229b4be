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
import { existsSync } from 'node:fs';
import { open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseSchedstatRunNs, parseVoluntarySwitches } from '../../src/platform/linux/task-bursts.ts';
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

/** One transaction of pgbench's per-transaction log (`-l`). */
export interface Transaction {
  /** When it was answered (ms since the epoch, pgbench's clock: the wall clock). */
  endMs: number;
  /** Its latency from the scheduled start (ms; queueing included under --rate). */
  latencyMs: number;
  /** The schedule lag within it (ms; 0 without --rate). */
  lagMs: number;
}

/**
 * pgbench's per-transaction log: `client_id transaction_no time script_no time_epoch time_us
 * [schedule_lag]`, times in microseconds, each client's transactions numbered from 1 (PostgreSQL
 * 15 documentation, pgbench, "Per-Transaction Logging"). A line it does not know (a skipped
 * transaction, an aggregated log, a gap in the numbers) is an error.
 */
export const parseTransactionLog = (text: string): Transaction[] => {
  const last = new Map<string, number>();
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const m = /^(\d+) (\d+) (\d+) \d+ (\d+) (\d{1,6})(?: (\d+))?$/.exec(l.trim());
      if (!m || Number(m[2]) !== (last.get(m[1]!) ?? 0) + 1)
        throw new Error(`pgbench's transaction log has a line it should not: ${l.slice(0, 200)}`);
      last.set(m[1]!, Number(m[2]));
      return {
        endMs: Number(m[4]) * 1000 + Number(m[5]) / 1000,
        latencyMs: Number(m[3]) / 1000,
        lagMs: Number(m[6] ?? 0) / 1000,
      };
    });
};

/** Writes the script where `postgres` can read it; answers its path. */
const scriptFile = async (cluster: Cluster, rows: number): Promise<string> => {
  const path = join(cluster.dir, `query-${Math.round(rows)}.sql`);
  await writeFile(path, queryScript(rows), { mode: 0o644 });
  return path;
};

const POLL_MS = 1;
const CONNECT_TIMEOUT_MS = 30_000;

/** A process's state letter (R, S, ...), X once it is gone. */
const procState = async (pid: number): Promise<string> => {
  const s = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ') X');
  return s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3);
};

/** The postmaster's children (its backends and background processes) with their titles. */
const childrenOf = async (postmaster: number): Promise<{ pid: number; title: string }[]> => {
  const list = await readFile(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').catch((e) => {
    if (e.code === 'ENOENT' && existsSync(`/proc/${postmaster}`))
      throw new Error('needs /proc/<pid>/task/<tid>/children (a kernel built with CONFIG_PROC_CHILDREN)');
    return '';
  });
  const pids = list.trim().split(/\s+/).filter(Boolean).map(Number);
  return Promise.all(
    pids.map(async (pid) => ({
      pid,
      title: (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' '),
    })),
  );
};

/** The backend of a client connected to database `db`, if there is one. */
const backendOf = async (postmaster: number, db: string): Promise<number | null> =>
  (await childrenOf(postmaster)).find((c) => c.title.includes(` ${db} `))?.pid ?? null;

/** A process's run time (ns) and the times it went to sleep of its own accord; null once gone. */
const runAndSleeps = async (pid: number): Promise<{ runNs: number; sleeps: number } | null> => {
  const [sched, status] = await Promise.all(
    ['schedstat', 'status'].map((f) => readFile(`/proc/${pid}/${f}`, 'utf8').catch(() => '')),
  );
  const runNs = parseSchedstatRunNs(sched!);
  const sleeps = parseVoluntarySwitches(status!);
  return runNs === null || sleeps === null ? null : { runNs, sleeps };
};

/**
 * Resolves once a client backend of the cluster has answered its first query. A backend whose
 * title says its connection is set up (PostgreSQL titles it by what it does: "idle", "SELECT";
 * "initializing", "authentication" and "startup" before) is noted; it has answered a query once
 * it has since run at least `minRunMs` more and gone to sleep at least once more (a backend
 * sleeps waiting for the next command, and not within this CPU-only query). pgbench opens a
 * connection of its own first and closes it before its client's; a backend that exits is
 * dropped when gone.
 */
const firstAnswer = async (postmaster: number, minRunMs: number, gone: () => boolean): Promise<void> => {
  const seen = new Map<number, { runNs: number; sleeps: number }>();
  const t0 = performance.now();
  for (;;) {
    if (gone()) throw new Error('pgbench ended before its connection answered a query');
    if (performance.now() - t0 > CONNECT_TIMEOUT_MS)
      throw new Error(`pgbench's connection answered no query within ${CONNECT_TIMEOUT_MS / 1000} s`);
    for (const { pid, title } of await childrenOf(postmaster)) {
      if (!/\[local\] (?!initializing|authentication|startup)/.test(title)) continue;
      const p = await runAndSleeps(pid);
      if (!p) continue;
      const was = seen.get(pid);
      if (!was) seen.set(pid, p);
      else if (p.runNs - was.runNs >= minRunMs * 1e6 && p.sleeps > was.sleeps) return;
    }
    await sleep(POLL_MS);
  }
};

export interface PgbenchRun {
  /** Every transaction pgbench logged, in order (`between` takes a window's). */
  transactions: Transaction[];
}

let logNo = 0;

/**
 * pgbench, one client, `--rate` per second (omit for back to back) for `seconds` or
 * `transactions`. `connected` runs (awaited) once the client's connection is up and has answered
 * its first query, and the transactions answered are counted from then: connecting costs the
 * server tens of milliseconds of CPU (two connections, pgbench's own check and its client's: 33-40
 * ms with the first query, 2026-12-06) and a first query loads the backend's catalog caches (10 ms
 * against 4.5 ms for the next, 2026-12-07), while a server's queries come over connections long
 * open. The run's figures are taken over the transactions after that point (`between`).
 */
export const pgbench = async (
  cluster: Cluster,
  o: {
    rows: number;
    rate?: number;
    seconds?: number;
    transactions?: number;
    /** The CPU of a query in ms, roughly (the first answer is told by at least half of it). */
    cpuMs: number;
    connected: () => Promise<void>;
  },
): Promise<PgbenchRun> => {
  const file = await scriptFile(cluster, o.rows);
  const prefix = `txlog-${logNo++}`;
  const args = ['-n', '-c', '1', '-j', '1', '-l', '--log-prefix', join(cluster.dir, prefix), '-f', file];
  if (o.rate !== undefined) args.push('-R', String(o.rate));
  if (o.transactions !== undefined) args.push('-t', String(o.transactions));
  else args.push('-T', String(o.seconds ?? 10));
  let ended = false;
  const running = cluster.client('pgbench', [...args, 'postgres']).finally(() => {
    ended = true;
  });
  const [ran, started] = await Promise.allSettled([
    running,
    firstAnswer(cluster.pid, o.cpuMs / 2, () => ended).then(o.connected),
  ]);
  if (ran.status === 'rejected') throw ran.reason;
  const r = ran.value;
  if (r.code !== 0) throw new Error(`pgbench failed: ${r.stderr}`);
  if (started.status === 'rejected') throw started.reason;
  const total = /number of transactions actually processed: (\d+)/.exec(r.stdout);
  if (!total) throw new Error(`pgbench output without its count of transactions: ${r.stdout.slice(-600)}`);
  const logs = (await readdir(cluster.dir)).filter((f) => f.startsWith(`${prefix}.`));
  if (logs.length !== 1) throw new Error(`pgbench left ${logs.length} transaction logs, not one`);
  const path = join(cluster.dir, logs[0]!);
  const transactions = parseTransactionLog(await readFile(path, 'utf8'));
  await rm(path);
  if (transactions.length !== Number(total[1]))
    throw new Error(`pgbench logged ${transactions.length} transactions and counted ${total[1]}`);
  return { transactions };
};

/**
 * The transactions answered between two wall-clock times (ms since the epoch), and their means,
 * the connection's first left out: the window opens once the server has answered it (pgbench,
 * above), which pgbench may log a little later (beside a busy server it waits for the CPU).
 */
export const between = (
  run: PgbenchRun,
  fromMs: number,
  toMs = Number.POSITIVE_INFINITY,
): { count: number; latencyMs: number; lagMs: number } => {
  const t = run.transactions.slice(1).filter((x) => x.endMs > fromMs && x.endMs <= toMs);
  const mean = (f: (x: Transaction) => number) => t.reduce((s, x) => s + f(x), 0) / Math.max(1, t.length);
  return { count: t.length, latencyMs: mean((x) => x.latencyMs), lagMs: mean((x) => x.lagMs) };
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
