/**
 * A real Prometheus (Debian's `prometheus` package) for a test or a benchmark: started on a
 * random loopback port with its own data directory and the given configuration, stopped (and
 * waited for) by `stop()`. Never a system service: the process is this test's child.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const PROMETHEUS = process.env.POWERPLAN_TEST_PROMETHEUS ?? '/usr/bin/prometheus';
export const PROMTOOL = process.env.POWERPLAN_TEST_PROMTOOL ?? '/usr/bin/promtool';
export const hasPrometheus = existsSync(PROMETHEUS) && existsSync(PROMTOOL);

export interface RunningPrometheus {
  url: string;
  child: ChildProcess;
  /** What it logged (stderr), for a failing assertion. */
  log: () => string;
  stop: () => Promise<void>;
}

/**
 * Starts Prometheus with `config` (YAML text) written to `dir/prometheus.yml` and its TSDB in
 * `dataDir` (default `dir/data`); resolves once it listens and is ready.
 */
export const startPrometheus = async (
  dir: string,
  config: string,
  options: { dataDir?: string; args?: string[] } = {},
): Promise<RunningPrometheus> => {
  const file = join(dir, 'prometheus.yml');
  await writeFile(file, config);
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${file}`,
      `--storage.tsdb.path=${options.dataDir ?? join(dir, 'data')}`,
      '--web.listen-address=127.0.0.1:0',
      '--log.level=info',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  // Ready once it has logged both its address and its readiness (/-/ready may sit behind auth).
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prometheus did not start:\n${log}`)), 30_000);
    child.stderr!.on('data', (d) => {
      log += d;
      const m = /msg="Listening on" address=(\S+)/.exec(log);
      if (m && log.includes('Server is ready to receive web requests')) {
        clearTimeout(timer);
        resolve(`http://${m[1]}`);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Prometheus exited with ${code}:\n${log}`));
    });
  }).catch(async (e) => {
    await stop();
    throw e;
  });
  return { url, child, log: () => log, stop };
};
