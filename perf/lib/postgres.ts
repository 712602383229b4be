/**
 * A throwaway PostgreSQL cluster for a benchmark script: Debian's PostgreSQL 15 binaries, a data
 * directory and a Unix-socket directory in a fresh temporary directory, owned by and run as the
 * `postgres` user (setpriv: exec, no session process in between), listening on no TCP address at all (`listen_addresses=''`; the port only names
 * the socket). The postmaster runs in the foreground as our child (no pg_ctl daemon, no system
 * service), so the caller can start it inside a cgroup; `stop()` shuts it down (fast, then
 * immediate, then SIGKILL) and removes the directory. Needs root (to switch to `postgres`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runProcess } from '../../scripts/lib/serve.mjs';
import { onCpu } from './processes.ts';

export const PG_BIN = '/usr/lib/postgresql/15/bin';
export const PG_USER = 'postgres';

export const havePostgres = (): boolean =>
  existsSync(join(PG_BIN, 'postgres')) && existsSync(join(PG_BIN, 'pgbench')) && process.getuid?.() === 0;

export interface Cluster {
  dir: string;
  socketDir: string;
  port: number;
  /** The postmaster's pid (its backends are its children). */
  pid: number;
  /** Runs a PostgreSQL client program (psql, pgbench, pg_dump, ...) as `postgres` against the cluster. */
  client(
    program: string,
    args: string[],
    timeoutMs?: number,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /**
   * The command line for a client program run as `postgres` (for callers that pipe into it), on
   * `cpu` alone where given, else where the cluster's clients run.
   */
  clientCommand(program: string, args: string[], cpu?: number): [string, string[]];
  stop(): Promise<void>;
}

const ids = async (): Promise<{ uid: number; gid: number }> => {
  const r = await runProcess('id', ['-u', PG_USER]);
  const g = await runProcess('id', ['-g', PG_USER]);
  if (r.code !== 0 || g.code !== 0)
    throw new Error(`no ${PG_USER} user (install Debian's postgresql package)`);
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
};

/** A PostgreSQL program as the postgres user, on `cpu` alone when given. */
const asPostgres =
  (cpu?: number) =>
  (program: string, args: string[]): [string, string[]] => {
    const argv = [
      '--reuid',
      PG_USER,
      '--regid',
      PG_USER,
      '--init-groups',
      '--',
      join(PG_BIN, program),
      ...args,
    ];
    const [cmd, ...rest] = onCpu(['setpriv', ...argv], cpu);
    return [cmd!, rest];
  };

/**
 * Creates the cluster under `parent` and starts the postmaster through `launch` (so the caller can
 * spawn it from inside a cgroup); resolves once it accepts connections.
 */
export const startCluster = async (o: {
  parent: string;
  port: number;
  settings?: Record<string, string>;
  launch?: (command: string, args: string[]) => ChildProcess;
  /** The CPU the server and every client program started through the cluster run on. */
  cpu?: number;
}): Promise<Cluster> => {
  const asPostgresOn = asPostgres(o.cpu);
  const { uid, gid } = await ids();
  await mkdir(o.parent, { recursive: true });
  const dir = await mkdtemp(join(o.parent, 'pg-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'socket');
  await mkdir(socketDir);
  await chown(dir, uid, gid);
  await chown(socketDir, uid, gid);
  let postmaster: ChildProcess | undefined;
  const env = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', PGHOST: socketDir, PGPORT: String(o.port) };
  const stop = async () => {
    if (postmaster && postmaster.exitCode === null && postmaster.signalCode === null) {
      const exited = new Promise((r) => postmaster?.once('exit', r));
      // SIGINT: fast shutdown; SIGQUIT: immediate; then SIGKILL (the backends die with it).
      for (const [signal, waitMs] of [
        ['SIGINT', 10_000],
        ['SIGQUIT', 5_000],
        ['SIGKILL', 5_000],
      ] as const) {
        postmaster.kill(signal);
        if (await Promise.race([exited.then(() => true), sleep(waitMs).then(() => false)])) break;
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const [cmd, initArgs] = asPostgresOn('initdb', [
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      PG_USER,
      '--no-sync',
      '-E',
      'UTF8',
    ]);
    const init = await runProcess(cmd, initArgs, { env, timeoutMs: 120_000 });
    if (init.code !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    const settings: Record<string, string> = {
      listen_addresses: "''",
      port: String(o.port),
      unix_socket_directories: socketDir,
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      shared_buffers: '128MB',
      max_connections: '50',
      autovacuum: 'off',
      jit: 'off',
      logging_collector: 'off',
      ...o.settings,
    };
    const [pm, pmArgs] = asPostgresOn('postgres', [
      '-D',
      data,
      ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v.replace(/^''$/, '')}`]),
    ]);
    const launch =
      o.launch ?? ((c: string, a: string[]) => spawn(c, a, { env, stdio: ['ignore', 'ignore', 'pipe'] }));
    postmaster = launch(pm, pmArgs);
    let log = '';
    postmaster.stderr?.on('data', (d) => {
      log = (log + d).slice(-4000);
    });
    const client: Cluster['client'] = async (program, args, timeoutMs = 600_000) => {
      const [c, a] = asPostgresOn(program, args);
      const r = await runProcess(c, a, { env, timeoutMs });
      return { code: r.code ?? 1, stdout: r.stdout, stderr: r.stderr };
    };
    for (let i = 0; ; i++) {
      if (postmaster.exitCode !== null) throw new Error(`postgres exited: ${log}`);
      if ((await client('pg_isready', ['-q'])).code === 0) break;
      if (i > 300) throw new Error(`postgres did not accept connections within 30 s: ${log}`);
      await sleep(100);
    }
    return {
      dir,
      socketDir,
      port: o.port,
      pid: postmaster.pid ?? 0,
      client,
      clientCommand: (program, args, cpu = o.cpu) => asPostgres(cpu)(program, args),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
};
