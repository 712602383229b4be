/**
 * Runs inside a private mount and PID namespace (started by real-daemons.ts as
 * `unshare --mount --pid --fork --kill-child --mount-proc -- node --import tsx namespace-child.ts`):
 * hides the machine's D-Bus, tuned and power-profiles-daemon state under tmpfs, writes
 * plugin-free tuned profiles with the real names, starts a system bus and one real daemon, then
 * `powerplan serve` on the Linux backend. Never run with the machine's tuned profiles: they change
 * sysctls and block-device settings.
 *
 * Protocol: argv[2] is `tuned`, `power-profiles-daemon` or `both`, argv[3] a scratch dir outside
 * the namespace's tmpfs mounts, argv[4] optionally JSON `{"repos":[...],"env":{...}}`: the
 * checkouts whose `powerplan serve` to start (default this one), extra environment and node
 * arguments (`nodeArgs`, e.g. the V8 flags, or `nodeArgsPerRepo`, one list per checkout) for them. It
 * prints one JSON line `{"ready":true,"url":...,"servers":[{"url","pid"}]}` (or `{"error":...}`), then answers JSON lines on stdin: `{"id":1,"run":["tuned-adm","active"]}` ->
 * `{"id":1,"code":0,"stdout":"...","stderr":"..."}`. When stdin closes it exits, and with it, as
 * the namespace's first process, everything it started.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startServing } from '../../../scripts/lib/serve.mjs';
import { until } from '../../support/until.ts';
import { TUNED_PROFILES } from './real-daemons.ts';

const daemon = process.argv[2];
const scratch = process.argv[3];
const options = JSON.parse(process.argv[4] ?? '{}') as {
  repos?: string[];
  env?: Record<string, string>;
  nodeArgs?: string[];
  nodeArgsPerRepo?: string[][];
};
const repos = options.repos ?? [resolve(import.meta.dirname, '../../..')];
const children: ChildProcess[] = [];
const reply = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);

const sh = (file: string, args: string[]) =>
  execFileSync(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });

const run = (file: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
    execFile(file, args, { env, timeout: 30_000 }, (error, stdout, stderr) =>
      res({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });

const start = (file: string, args: string[], env: NodeJS.ProcessEnv, log: string): ChildProcess => {
  const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  child.stdout?.on('data', (d) => out.push(String(d)));
  child.stderr?.on('data', (d) => out.push(String(d)));
  child.once('exit', () => writeFileSync(join(scratch!, `${log}.log`), out.join('')));
  children.push(child);
  return child;
};

const setUp = async (): Promise<{ url: string; pid: number }[]> => {
  if (daemon !== 'tuned' && daemon !== 'power-profiles-daemon' && daemon !== 'both')
    throw new Error(`unknown daemon ${daemon}`);
  if (!scratch) throw new Error('no scratch dir given');
  // The machine's own state stays untouched underneath: every path a daemon writes is a tmpfs here.
  mkdirSync('/var/lib/power-profiles-daemon', { recursive: true });
  mkdirSync('/run/tuned', { recursive: true });
  for (const dir of [
    '/run/dbus',
    '/run/tuned',
    '/etc/tuned',
    '/usr/lib/tuned',
    '/var/lib/power-profiles-daemon',
  ]) {
    sh('mount', ['-t', 'tmpfs', '-o', 'mode=0755', 'tmpfs', dir]);
  }
  for (const name of TUNED_PROFILES) {
    mkdirSync(join('/usr/lib/tuned', name));
    // No [plugin] sections: switching to it tunes nothing.
    writeFileSync(join('/usr/lib/tuned', name, 'tuned.conf'), `[main]\nsummary=${name} (no plugins, test)\n`);
  }
  writeFileSync(
    '/etc/tuned/tuned-main.conf',
    'daemon = 1\ndynamic_tuning = 0\nreapply_sysctl = 0\nrecommend_command = 0\n',
  );
  writeFileSync('/etc/tuned/active_profile', 'balanced\n');
  writeFileSync('/etc/tuned/profile_mode', 'manual\n');

  const env = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8' };
  start('dbus-daemon', ['--system', '--nofork', '--nopidfile'], env, 'dbus');
  await until(
    'the system bus',
    async () =>
      (
        await run(
          'dbus-send',
          [
            '--system',
            '--print-reply',
            '--dest=org.freedesktop.DBus',
            '/org/freedesktop/DBus',
            'org.freedesktop.DBus.ListNames',
          ],
          env,
        )
      ).code === 0,
    20_000,
  );
  if (daemon !== 'power-profiles-daemon') {
    start(
      'tuned',
      ['--log', join(scratch, 'tuned-daemon.log'), '--pid', '/run/tuned/tuned.pid', '--no-socket'],
      env,
      'tuned',
    );
    await until('tuned', async () => (await run('tuned-adm', ['active'], env)).code === 0, 20_000);
  }
  if (daemon !== 'tuned') {
    start('/usr/libexec/power-profiles-daemon', [], { ...env, POWER_PROFILE_DAEMON_FAKE_DRIVER: '1' }, 'ppd');
    await until(
      'power-profiles-daemon',
      async () => (await run('powerprofilesctl', ['list'], env)).code === 0,
      20_000,
    );
  }

  const servers: { url: string; pid: number }[] = [];
  for (const [i, repo] of repos.entries()) {
    const nodeArgs = options.nodeArgsPerRepo?.[i] ?? options.nodeArgs ?? [];
    const args = [...nodeArgs, join(repo, 'bin', 'powerplan.js'), 'serve'];
    const server = await startServing(process.execPath, args, {
      env: {
        ...env,
        HOME: scratch,
        POWERPLAN_BACKEND: 'linux',
        POWERPLAN_HOST: '127.0.0.1',
        POWERPLAN_PORT: '0',
        POWERPLAN_STATE_DIR: join(scratch, i === 0 ? 'state' : `state-${i}`),
        POWERPLAN_DESIRED_INTERVAL: '1',
        ...options.env,
      },
    });
    children.push(server.child);
    server.child.once('exit', () => writeFileSync(join(scratch, `powerplan-${i}.log`), server.output()));
    servers.push({ url: server.url, pid: server.child.pid! });
  }
  return servers;
};

/** Stops the service, then the daemon, then the bus; whatever is left dies with this process. */
const stop = async () => {
  for (const c of children.reverse()) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
  }
  process.exit(0);
};

try {
  const servers = await setUp();
  reply({ ready: true, url: servers[0]!.url, servers });
} catch (e) {
  reply({
    error: e instanceof Error ? `${e.message}\n${(e as { stderr?: Buffer }).stderr ?? ''}` : String(e),
  });
  stop();
}

const lines = createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  const req = JSON.parse(line) as { id: number; run: string[] };
  const [file, ...args] = req.run;
  reply({ id: req.id, ...(await run(file!, args)) });
});
lines.on('close', stop);
process.on('SIGTERM', stop);
