/**
 * Starts Debian's real tuned or power-profiles-daemon with its own system bus inside a private
 * mount and PID namespace (namespace-child.ts), with `powerplan serve` on the Linux backend in
 * there too, and talks to it: the service over loopback HTTP (the network is shared), the daemon's
 * own tool through the child. Stopping it, or this process dying, ends every process in the
 * namespace (the child is its first process, and unshare --kill-child kills it).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { readAdminToken } from '../../support/processes.ts';

export type Daemon = 'tuned' | 'power-profiles-daemon' | 'both';

/** The tuned profiles written (plugin-free) into the namespace: real names, no tuning. */
export const TUNED_PROFILES = [
  'balanced',
  'throughput-performance',
  'powersave',
  'latency-performance',
  'virtual-guest',
] as const;

const childPath = join(import.meta.dirname, 'namespace-child.ts');

/** Why the real-daemon tests cannot run here, or null when they can. */
export const missing = (): string | null => {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (a private mount namespace needs root)';
  for (const tool of [
    '/usr/bin/dbus-daemon',
    '/usr/sbin/tuned',
    '/usr/sbin/tuned-adm',
    '/usr/libexec/power-profiles-daemon',
    '/usr/bin/powerprofilesctl',
  ]) {
    if (!existsSync(tool)) return `${tool} is not installed`;
  }
  const probe = spawnSync('unshare', ['--mount', '--pid', '--fork', '--mount-proc', '--', 'true']);
  if (probe.status !== 0)
    return `unshare cannot create namespaces here: ${String(probe.stderr).trim() || probe.error}`;
  return null;
};

export const install = 'apt-get install dbus tuned power-profiles-daemon (and run the tests as root)';

export interface Namespace {
  url: string;
  /** Every service started (their pids are the namespace's). */
  servers: { url: string; pid: number }[];
  /** Runs a command inside the namespace (e.g. `tuned-adm active`). */
  run: (...argv: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** JSON from the service; throws on a status other than `expect`. */
  api: <T = unknown>(method: string, path: string, body?: unknown, expect?: number) => Promise<T>;
  /** The daemons' and the service's output, for failure messages. */
  dir: string;
  stop: () => Promise<void>;
}

export interface NamespaceOptions {
  /** Checkouts whose `powerplan serve` to start; default this one. */
  repos?: string[];
  /** Extra environment for the services. */
  env?: Record<string, string>;
  /** node arguments before the bin (the V8 flags). */
  nodeArgs?: string[];
  /** The same for each checkout of `repos` in turn (each started with its own V8 flags); before nodeArgs. */
  nodeArgsPerRepo?: string[][];
}

export const startNamespace = async (daemon: Daemon, options: NamespaceOptions = {}): Promise<Namespace> => {
  const dir = await mkdtemp(join(tmpdir(), `powerplan-${daemon}-`));
  const child: ChildProcess = spawn(
    'unshare',
    [
      '--mount',
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--',
      process.execPath,
      '--import',
      'tsx',
      childPath,
      daemon,
      dir,
      JSON.stringify(options),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const pending = new Map<number, (v: { code: number | null; stdout: string; stderr: string }) => void>();
  let nextId = 1;
  const stop = async () => {
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    await rm(dir, { recursive: true, force: true });
  };
  type First = { ready?: boolean; url?: string; servers?: Namespace['servers']; error?: string };
  const first = await new Promise<First>((resolve) => {
    const lines = createInterface({ input: child.stdout! });
    let answered = false;
    lines.on('line', (line) => {
      const msg = JSON.parse(line) as First & { id?: number };
      if (!answered) {
        answered = true;
        resolve(msg);
        return;
      }
      const done = pending.get(msg.id!);
      pending.delete(msg.id!);
      done?.(msg as never);
    });
    child.once('exit', (code) => {
      if (!answered) resolve({ error: `the namespace exited with ${code} before it was ready` });
    });
  });
  if (!first.ready || !first.url) {
    await stop();
    throw new Error(`${daemon} in a namespace did not start: ${first.error}`);
  }
  const url = first.url;
  return {
    url,
    servers: first.servers ?? [],
    dir,
    stop,
    run: (...argv) =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        child.stdin!.write(`${JSON.stringify({ id, run: argv })}\n`);
      }),
    // As root's tools do: with the local administrator credential the service wrote.
    api: async <T>(method: string, path: string, body?: unknown, expect = 200) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${readAdminToken(join(dir, 'state'))}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (res.status !== expect)
        throw new Error(`${method} ${path}: ${res.status} (expected ${expect}): ${text}`);
      return (text ? JSON.parse(text) : undefined) as T;
    },
  };
};
