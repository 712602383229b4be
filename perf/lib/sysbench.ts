/**
 * `sysbench cpu`, the well-known peer the CPU benchmark is compared with: installed from Debian
 * (`apt-get install -y sysbench`) when missing, run single-threaded, optionally pinned to CPUs.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIG = { maxBuffer: 64 * 1024 * 1024 };

export const ensureSysbench = async (): Promise<void> => {
  try {
    await run('sysbench', ['--version']);
    return;
  } catch {
    // not installed: install it below
  }
  const install = () => run('apt-get', ['install', '-y', 'sysbench'], BIG);
  try {
    await install();
  } catch {
    await run('apt-get', ['update'], BIG);
    await install();
  }
};

export const sysbenchVersion = async (): Promise<string> =>
  (await run('sysbench', ['--version'])).stdout.trim();

/**
 * `sysbench cpu --threads=1 --time=<s> run`: its "events per second" line. With `cpus`, pinned
 * with taskset (e.g. '0').
 */
export const sysbenchCpu = async (seconds = 5, cpus?: string): Promise<number> => {
  const args = ['cpu', '--threads=1', `--time=${seconds}`, 'run'];
  const { stdout } = cpus
    ? await run('taskset', ['-c', cpus, 'sysbench', ...args])
    : await run('sysbench', args);
  const m = /events per second:\s*([\d.]+)/.exec(stdout);
  if (!m) throw new Error(`unexpected sysbench output:\n${stdout}`);
  return Number(m[1]);
};
